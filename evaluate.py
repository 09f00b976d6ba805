"""Retrieval benchmark report: the trained retriever vs. baselines, with diagnostics.

    python evaluate.py --retriever exports/demo --data demo.jsonl.gz --out reports/demo

See ``python evaluate.py --help`` and sam_model/evaluation/. A bad input ends in one ``error:`` line
naming the file and what to do (``--traceback`` for the full trace).
"""

import sys

from sam_model.evaluation.run import run

if __name__ == "__main__":
    sys.exit(run())
