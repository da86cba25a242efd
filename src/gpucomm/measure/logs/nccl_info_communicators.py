"""Separate communicators where one was meant: each node (or process) built its own and never talks to the others.

Two signatures, one per kind of program:

* nccl-tests: the header (``# nThread 1 nGpus 8 ...``) and the device list are printed by the process of
  rank 0 only (``src/common.cu``). Two headers before any run has ended, or two device lists that each
  start at rank 0 in different processes, are two tests running side by side: nccl-tests built without
  MPI (``make MPI=1``), or launched by an ``mpirun`` other than the MPI it was built with, runs one whole
  test per process.
* NCCL's comm lines: every communicator has one rank 0. Rank 0 of communicators of the same size printed
  on two hosts, with no communicator spanning the hosts (none larger, none with ``nNodes`` > 1), are
  per-node communicators: PyTorch jobs whose nodes did not join one rendezvous do this.

This module uses the standard library only.
"""

from __future__ import annotations

from gpucomm.measure.logs.nccl_info_records import Finding, NcclInfoLog, TestDevice, finding_lines

__all__ = ["check_per_node_communicators", "concurrent_test_runs", "per_node_sizes"]

_SOURCE = "https://github.com/NVIDIA/nccl-tests/issues/27"
"""nccl-tests' maintainers: a multi-node run needs the tests built with ``MPI=1`` (after ``make clean``); without it
each process runs the test alone on its node."""


def _device_lists(devices: tuple[TestDevice, ...]) -> list[list[TestDevice]]:
    """The device list lines split into lists, a new list at every rank 0."""
    lists: list[list[TestDevice]] = []
    for d in devices:
        if d.rank == 0 or not lists:
            lists.append([])
        lists[-1].append(d)
    return lists


def concurrent_test_runs(log: NcclInfoLog) -> tuple[list[int], list[list[TestDevice]]]:
    """The nccl-tests headers and device lists of runs that ran side by side (no run ended between them).

    Parameters
    ----------
    log : NcclInfoLog

    Returns
    -------
    (list of int, list of list of TestDevice)
        The header lines of concurrent runs (empty when fewer than two) and the device lists of concurrent
        runs from different processes (empty when fewer than two).
    """
    def concurrent(starts: list[int]) -> bool:
        return any(not any(a < end < b for end in log.test_ends) for a, b in zip(starts, starts[1:]))

    headers = list(log.test_headers) if len(log.test_headers) > 1 and concurrent(list(log.test_headers)) else []
    lists = [dl for dl in _device_lists(log.test_devices) if dl[0].rank == 0]
    processes = {(dl[0].host, dl[0].pid) for dl in lists}
    if len(lists) < 2 or len(processes) < 2 or not concurrent([dl[0].line for dl in lists]):
        lists = []
    return headers, lists


def per_node_sizes(log: NcclInfoLog) -> dict[int, tuple[str, ...]]:
    """Communicator sizes whose rank 0 was printed on two or more hosts, when no communicator spans hosts.

    Parameters
    ----------
    log : NcclInfoLog

    Returns
    -------
    dict of int to tuple of str
        Size -> the hosts that each printed a rank 0 of a communicator of that size; empty when a larger
        communicator or one with ``nNodes`` > 1 is in the log.
    """
    if any((c.nnodes or 0) > 1 for c in log.communicators):
        return {}
    largest = max((c.nranks for c in log.communicators), default=0)
    hosts: dict[int, list[str]] = {}
    for c in log.communicators:
        for host in c.rank0_hosts:
            if host not in hosts.setdefault(c.nranks, []):
                hosts[c.nranks].append(host)
    return {n: tuple(h) for n, h in hosts.items() if len(h) > 1 and n == largest}


def check_per_node_communicators(log: NcclInfoLog) -> list[Finding]:
    """The ``per_node_communicators`` finding (error) where the log shows separate runs or communicators.

    Parameters
    ----------
    log : NcclInfoLog

    Returns
    -------
    list of Finding
        One finding, or none.
    """
    headers, lists = concurrent_test_runs(log)
    sizes = per_node_sizes(log)
    if not headers and not lists and not sizes:
        return []
    evidence, lines = [], []
    if headers:
        evidence.append(f"{len(headers)} nccl-tests headers with no finished run between them: each process printed "
                        "its own, so each ran the test alone")
        lines += headers
    if lists:
        runs = ", ".join(f"{len(dl)} rank(s) on {dl[0].host} (pid {dl[0].pid})" for dl in lists[:4])
        evidence.append(f"{len(lists)} device lists that each start at rank 0: {runs}")
        lines += [dl[0].line for dl in lists]
    for n, hosts in sizes.items():
        evidence.append(f"NCCL built {n}-rank communicators whose rank 0 is on {len(hosts)} hosts ({', '.join(hosts[:6])}) "
                        "and no communicator spans the hosts")
        lines += [c.line for c in log.communicators if c.nranks == n]
    return [Finding(
        "per_node_communicators", "error", "each node (or process) built its own communicator: they never exchange data",
        "; ".join(evidence), finding_lines(lines),
        "nccl-tests: rebuild with MPI (make clean; make MPI=1 MPI_HOME=...), launch with the mpirun of that MPI, and check "
        "that the header shows all GPUs (e.g. 16 ranks for 2 x 8); PyTorch: start every node in one job (the same "
        "MASTER_ADDR/MASTER_PORT or --rdzv-endpoint, --nnodes and a distinct --node-rank per node)",
        _SOURCE)]
