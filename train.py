"""Train the SAM retriever: ``python train.py fit --config configs/demo.yaml``.

Everything about a run is in its config file; see ``python train.py fit --help``. A bad input ends
in one ``error:`` line naming the file and what to do (``--traceback`` for the full trace).
"""

import sys

from sam_model.training.cli import run

if __name__ == "__main__":
    sys.exit(run())
