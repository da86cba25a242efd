"""The torch side of each collective: buffers, the torch.distributed call, the exact correctness check."""
