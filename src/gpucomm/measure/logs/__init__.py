"""Reading what NCCL and nccl-tests print (pure Python: no torch).

files
    Reading a log from a file or standard input, with one-line errors.
nccl_tests
    nccl-tests' text output: header, result rows (both placements), footer, runs, warnings (the entry points;
    its parts: nccl_tests_records, _layouts, _lines, _header, _parse, _shape, _checks).
nccl_tests_json
    nccl-tests' JSON output (``-J``).
nccl_tests_results
    Parsed nccl-tests sweeps as gpucomm results records and tables.
nccl_info
    ``NCCL_DEBUG=INFO`` logs: version, ranks, transports, channels, rings, trees, tuning,
    WARN lines, and the known problems they reveal (``gpucomm diagnose``).
"""
