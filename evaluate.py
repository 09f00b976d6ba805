"""Retrieval benchmark report: the trained retriever vs. baselines, with diagnostics.

    python evaluate.py --retriever exports/demo --data demo.jsonl.gz --out reports/demo

See ``python evaluate.py --help`` and sam_model/evaluation/.
"""

import sys

from sam_model.evaluation.run import main

if __name__ == "__main__":
    sys.exit(main())
