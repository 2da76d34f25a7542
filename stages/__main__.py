"""``python -m stages <name> [options]``: run one stage of this project (what dvc.yaml runs).

The stages come from this folder; :func:`ragcourt.orchestration.stage_entry.main` parses the
stage's options and calls the library function its ``STAGE`` names.
"""

from pathlib import Path

from ragcourt.core.entry import run_entry
from ragcourt.orchestration.stage_entry import main

if __name__ == "__main__":
    run_entry(lambda: main(stages_dir=Path(__file__).resolve().parent))
