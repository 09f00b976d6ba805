"""The Janus benchmarks' command: which gate keeps a memory best on a non-stationary stream?

    python -m sam_model.bench.janus --config configs/janus_sgd.yaml --out runs/janus            # the head stream
    python -m sam_model.bench.janus --config configs/janus_bank.yaml --out runs/janus_bank      # the bank stream

The config's ``stream:`` (or ``--stream head|bank``) picks the benchmark: ``head`` is the SAM retriever head on
the SGD domain stream (:mod:`sam_model.bench.janus_head`), ``bank`` a memory bank through faults
(:mod:`sam_model.bench.janus_bank`). ``--config FILE --help`` lists that benchmark's options.
"""

from __future__ import annotations

import sys

from sam_model.bench.janus_config import override_alone, stream_of


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    alone = override_alone(argv)
    if alone is not None:
        print(f"error: {alone} sets no data.train: it is an override; stack it on a base, e.g. --config "
              f"configs/janus_sgd.yaml --config {alone}", file=sys.stderr)
        return 2
    stream = stream_of(argv)
    if stream == "bank":
        from sam_model.bench.janus_bank import main as run
    elif stream == "head":
        from sam_model.bench.janus_head import main as run
    else:
        print(f"error: stream: {stream!r} is not a Janus benchmark; use head (configs/janus_sgd.yaml) or bank "
              f"(configs/janus_bank.yaml)", file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
