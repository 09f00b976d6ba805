"""The ``sam-serve`` command: load a retriever, open every tenant's memory (checkpoint + log replay), serve.

    sam-serve --keys keys.json [--data sam-serve-data] [--model sam-general] [--port 8420]
              [--qdrant-path DIR | --qdrant-url URL | --qdrant-edge DIR]
              [--checkpoint-every 1000] [--checkpoint-share 0.1] [--batch-ms 2] [--max-body-mb 5]
    sam-serve --keys keys.json --stdio TENANT [--user-id ID] [--agent-id ID] [--run-id ID]
                                                   # MCP over stdin/stdout for one tenant (no HTTP), one scope
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Sequence

from sam_model.cpus import cores
from sam_model.io import DefaultsHelp, run_cli
from sam_model.limits import MAX_BODY_BYTES, number_option

log = logging.getLogger("sam_model.serve")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sam-serve", description=__doc__.split("\n\n")[0],
                                formatter_class=DefaultsHelp,
                                epilog="Environment (README 'Served memory'): SAM_TEXT_BACKEND (auto, torch, onnx, "
                                       "bf16, int8) chooses what runs BERT; int8 serves about 1.7x the searches a "
                                       "second at saturation, and rankings change. On a CPU with bfloat16 units, "
                                       "auto leaves bfloat16 out here unless SAM_TEXT_BF16=1: it served fewer "
                                       "searches a second.")
    p.add_argument("--keys", required=True, help="JSON file {tenant: api key}: who may call, and whose memory "
                   "each key reaches (keys of >= 16 characters). A tenant's value may also be an entry {\"key\": "
                   "KEY, \"user_id\": ID} (agent_id, run_id too), or a list of keys and entries: such a key serves "
                   "ID's memory only, over HTTP and MCP (its calls' user_id defaults to ID, another user_id is a 403, "
                   "never widened: README 'Served memory')"),
    p.add_argument("--data", default="sam-serve-data", help="folder of the tenants' checkpoints and write-ahead "
                   "logs (one subfolder per tenant)")
    p.add_argument("--model", default="sam-general", help="the retriever: an export folder or a packaged name")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback by default)")
    p.add_argument("--port", type=port, default=8420, help="port to listen on (1-65535)")
    p.add_argument("--qdrant-path", default=None, help="keep the vectors in an embedded Qdrant named by "
                   "this path (one collection per tenant; it runs in memory and is saved with each tenant's data, "
                   "never in Qdrant's own pickle files) instead of FAISS")
    p.add_argument("--qdrant-url", default=None, help="keep the vectors in the Qdrant server or cluster at this "
                   "URL (API key from $QDRANT_API_KEY) instead of FAISS")
    p.add_argument("--qdrant-edge", metavar="DIR", default=None, help="keep the vectors in Qdrant Edge, Qdrant's "
                   "own engine (HNSW, payload indexes) embedded in this process (pip install 'sam_model[qdrant-edge]'):"
                   " one shard per tenant, live under DIR (scratch), copied into each tenant's data at a checkpoint")
    p.add_argument("--collection", default="sam", help="Qdrant collection prefix: <prefix>_<tenant> (two deployments "
                   "on one Qdrant server need different prefixes: a load takes a collection back to its own save)")
    p.add_argument("--checkpoint-every", type=int, default=1000, help="save a tenant's memory after at least this "
                   "many writes (and at a clean shutdown) and drop the log records it holds; a restart replays about "
                   "this many (more if writes came while a save was written, or a save failed)")
    p.add_argument("--checkpoint-share", type=float, default=None, help="and after at least this share of the "
                   "tenant's memories in writes (default 0.1: at 100k memories every 10,000 writes), so that saving "
                   "every memory costs each write the same as the memory grows; the log keeps each write's vectors, "
                   "so replaying it does not run the encoder (0: after --checkpoint-every writes, whatever the size)")
    p.add_argument("--batch-ms", type=float, default=2.0, help="micro-batching window: concurrent searches "
                   "arriving within it share one encoder forward (0: each encodes alone; at most 1000)")
    p.add_argument("--batch-max", type=int, default=32, help="most queries in one encoder forward")
    p.add_argument("--max-body-mb", type=body_mb, default=MAX_BODY_BYTES / 1e6, help="largest request body over "
                   "HTTP (and MCP at /mcp; a line with --stdio) in MB of 10^6 bytes, from "
                   f"{MIN_BODY_MB:g} to {MAX_BODY_MB:g}: a larger one is refused with a 413 (over stdio a JSON-RPC "
                   "error) before it is read whole. "
                   "The default takes an agent's session line as long as the live add holds whole (4 MB as JSON: a "
                   "Claude Code response of large tool results; its long texts stored cut, with a note), which a "
                   "sidecar cannot split; raise it for longer lines (each request's body is held in memory while "
                   "read)")
    p.add_argument("--no-fsync", action="store_true", help="do not fsync the log (benchmarks only: a machine "
                   "crash may then lose acknowledged writes; a process kill does not)")
    p.add_argument("--reencode", action="store_true", help="the tenants' memories were written with another --model "
                   "(say, before it was adapted): encode them all again with this one on start (without it such a "
                   "tenant is refused, since its memories would be searched with another model's queries)")
    p.add_argument("--no-mcp", action="store_true", help="serve HTTP only (no MCP at /mcp)")
    p.add_argument("--stdio", metavar="TENANT", default=None, help="serve MCP over stdin/stdout for this tenant "
                   "instead of HTTP (an agent that starts the memory as its subprocess)")
    p.add_argument("--user-id", metavar="ID", default=None, help="with --stdio: serve user ID's memory only. The "
                   "tools' user_id defaults to ID and their descriptions say so, so the model need not pass it (it "
                   "cannot see its session's id, and a forgotten or misspelt one reached another user); a call giving "
                   "another user_id is refused, never widened or switched (forget_all deletes only ID's memories)")
    for scope in ("agent", "run"):
        p.add_argument(f"--{scope}-id", metavar="ID", default=None, help=f"with --stdio: serve {scope} ID's memory "
                       f"only, as --user-id does a user's ({scope}_id defaults to ID; another {scope}_id is refused)")
    p.add_argument("--threads", type=int, default=cores(), help="threads of the encoder (torch and ONNX Runtime; "
                   "default: the cores this process may use, capped by a cgroup CPU quota). On two quiet cores "
                   "with agent-length states, 2 threads against 1 served 32 %% more searches a second at full "
                   "load and cut p99 by 22 ms at an agent's pace (README 'Served memory'); on a host shared with "
                   "other busy processes, 1 (one query took 928 ms with 2 threads, 176 ms with 1)")
    p.add_argument("--device", default=None, help="torch device of the encoder (default: cuda if available)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                   help="log level of the service and uvicorn")
    p.add_argument("--log-file", default=None, help="also write the log to this file (created readable by its owner "
                   "alone: tool errors in it can name users; default none)")
    return p


def build(args: argparse.Namespace):
    """(tenants, search function) from the parsed arguments."""
    import dataclasses

    from sam_model.retriever import SAMRetriever
    from sam_model.serve.batching import MAX_WINDOW_S, BatchedSearch
    from sam_model.serve.tenants import CHECKPOINT_SHARE, Tenants, check_checkpoint_share, read_keys
    from sam_model.store import store_config_of

    if sum(bool(v) for v in (args.qdrant_url, args.qdrant_path, args.qdrant_edge)) > 1:
        raise SystemExit("sam-serve: give one of --qdrant-url, --qdrant-path and --qdrant-edge")
    keys = read_keys(args.keys)
    for name in ("threads", "checkpoint_every", "batch_max"):
        if getattr(args, name) < 1:
            raise SystemExit(f"sam-serve: --{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not 0 <= args.batch_ms <= MAX_WINDOW_S * 1000:  # NaN too: it turned batching off, silently
        raise SystemExit(f"sam-serve: --batch-ms must be a number of milliseconds from 0 to {MAX_WINDOW_S * 1000:g} "
                         f"(each lone search waits up to it), got {args.batch_ms}")
    try:
        share = CHECKPOINT_SHARE if args.checkpoint_share is None else check_checkpoint_share(args.checkpoint_share)
    except ValueError as err:
        raise SystemExit(f"sam-serve: --checkpoint-share: {err}") from None
    import torch

    from sam_model.models import bf16_text

    torch.set_num_threads(args.threads)
    # Served, the text encoder's bfloat16 copy is left out of backend auto unless $SAM_TEXT_BF16=1: it encodes 16
    # queries 20 % faster in-process, yet the service answered 14 % fewer searches at saturation with it (83-87
    # against 89-99 a second, README "Served memory"); PyTorch runs its forward op by op from Python, sharing the
    # interpreter with HTTP, where ONNX Runtime makes one call (a likely cause, not measured apart).
    os.environ.setdefault(bf16_text.AUTO_ENV, "0")
    retriever = SAMRetriever.load(args.model, device=args.device)
    # which model answers: a user who adapted one and serves it sees it named (a folder is loaded before a packaged
    # name, as SAMRetriever.load does)
    log.info("sam-serve: model %s", os.path.abspath(args.model) if os.path.isdir(args.model) else
             f"{args.model} (packaged)")
    cfg = store_config_of(retriever)
    if args.qdrant_url:
        from sam_model.backends.qdrant import trust_url

        trust_url(args.qdrant_url)  # the operator's server: the tenants' checkpoints name it (check_trusted)
    if args.qdrant_url or args.qdrant_path:
        index = {"kind": "qdrant", "collection": args.collection}
        index.update({"url": args.qdrant_url} if args.qdrant_url else {"path": args.qdrant_path})
        cfg = dataclasses.replace(cfg, index=index)
    elif args.qdrant_edge:
        cfg = dataclasses.replace(cfg, index={"kind": "qdrant-edge", "path": args.qdrant_edge})
    tenants = Tenants(keys, args.data, retriever, cfg, checkpoint_every=args.checkpoint_every,
                      fsync=not args.no_fsync, checkpoint_share=share, reencode=args.reencode)
    search = BatchedSearch(args.batch_ms / 1000.0, args.batch_max) if args.batch_ms > 0 else None
    return tenants, search


def port(text: str) -> int:
    """``--port``: a TCP port (out of range it was a uvicorn traceback after the model had loaded)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want a port number from 1 to 65535, got {text!r}") from None
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"want a port number from 1 to 65535, got {n}")
    return n


MIN_BODY_MB = 1.5  # one memory at the text limit in 4-byte UTF-8 (an update, a message), with its JSON
MAX_BODY_MB = 1000.0


# --max-body-mb: 0, a negative or NaN refused every body, or none, with no word at start
body_mb = number_option(MIN_BODY_MB, MAX_BODY_MB, float, "of MB")


def unreachable() -> tuple[type[BaseException], ...]:
    """What a vector database that does not answer raises (one line, not a trace of the client's internals)."""
    try:
        from qdrant_client.http.exceptions import ResponseHandlingException
    except ImportError:
        return ()
    return (ResponseHandlingException,)


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, errors=(ValueError, OSError, *unreachable()),
                   hint=lambda e: "is the Qdrant server at --qdrant-url running and reachable?"
                   if isinstance(e, unreachable()) else "")


# libraries whose INFO lines are no news to a served memory's user: faiss' loader says at every start, in nine lines,
# that it could not load its AVX512 builds ("ModuleNotFoundError(...)"), which in Codex's or Claude Code's MCP log
# (--stdio: the server's stderr) read as errors of the memory
CHATTY = ("faiss.loader",)


def quiet_libraries(level: str) -> None:
    """At ``--log-level info`` (the default) the :data:`CHATTY` libraries say warnings and errors only; at debug,
    everything."""
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.DEBUG if level == "debug" else max(logging.WARNING,
                                                                                    logging.getLevelName(level.upper())))


def log_handlers(log_file: str | None) -> list[logging.Handler]:
    """The log's handlers: standard error, and ``log_file`` where given, created with mode 0600 (its lines can name
    users and their scopes; the tenants' folders are 0700 for the same reason); a file that exists keeps its mode."""
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_file:
        os.close(os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        handlers.append(logging.FileHandler(log_file))
    return handlers


def _main(argv: Sequence[str] | None) -> int:
    args = parser().parse_args(argv)
    handlers = log_handlers(args.log_file)
    logging.basicConfig(level=args.log_level.upper(), handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_libraries(args.log_level)
    scopes = {"user_id": args.user_id, "agent_id": args.agent_id, "run_id": args.run_id}
    if not args.stdio and (given := [f"--{n.replace('_', '-')}" for n, v in scopes.items() if v is not None]):
        raise SystemExit(f"sam-serve: {' and '.join(given)} fix{'es' if len(given) == 1 else ''} the scope of a "
                         "--stdio server only (an agent's own subprocess); over HTTP a key fixes its scopes in the keys "
                         "file ({\"key\": ..., \"user_id\": ...}): add --stdio TENANT or leave it out")
    from sam_model.serve.mcp import create_mcp, fixed_scopes

    fixed = fixed_scopes(scopes)  # a bad ID is refused before the model loads
    tenants, search = build(args)
    if args.stdio:
        if args.stdio not in tenants.tenants:
            raise SystemExit(f"sam-serve: --stdio {args.stdio!r} is not a tenant of {args.keys}")
        try:
            create_mcp(tenants, search, stdio_tenant=args.stdio, scopes=fixed,
                       max_body=round(args.max_body_mb * 1e6)).run("stdio")
        finally:
            tenants.close()
        return 0
    import uvicorn

    from sam_model.serve.http import create_app

    mcp = None if args.no_mcp else create_mcp(tenants, search)
    mcp_app = None if mcp is None else mcp.streamable_http_app(streamable_http_path="/", stateless_http=True,
                                                               json_response=True, host=args.host)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with (mcp.session_manager.run() if mcp is not None else contextlib.nullcontext()):
            log.info("sam-serve: %d tenants, listening on http://%s:%d (MCP at /mcp%s), encoder on %d threads",
                     len(tenants.tenants), args.host, args.port, " off" if mcp is None else "", args.threads)
            yield
        tenants.close()  # a clean shutdown checkpoints every tenant

    app = create_app(tenants, search, mcp_app, lifespan, max_body=round(args.max_body_mb * 1e6))
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


__all__ = ["build", "main", "parser"]
