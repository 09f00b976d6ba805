"""Train the SAM retriever: ``python train.py fit --config configs/demo.yaml``.

Everything about a run is in its config file; see ``python train.py fit --help``.
"""

from sam_model.training.cli import main

if __name__ == "__main__":
    main()
