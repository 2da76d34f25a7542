"""ragcourt's benchmarks: ``python -m benchmarks NAME [ARGS...]`` runs benchmark ``NAME``;
``python -m benchmarks`` lists them.

Every public module (or subpackage) of this package is one benchmark, named by its module, with
an argparse ``main(argv)``; shared helpers live in :mod:`benchmarks._common`. Run from the
repository root: the benchmarks read ``params.yaml``, ``configs/`` and ``data/`` there and
write their results under ``benchmarks/data/``. Not installed with ragcourt.
"""
