# Sparrow's bridge to Modal's Python SDK (pip install modal). It uses only
# documented API: modal.App.lookup, modal.Image.from_registry,
# modal.Sandbox.create / from_id, Sandbox.exec and ContainerProcess
# stdin.write / write_eof / drain, stdout.read and wait
# (modal.com/docs/guide/sandbox, /docs/guide/sandbox-spawn,
# /docs/sdk/py/latest/modal.io_streams).
#
#   create CONFIG_JSON   create a Sandbox; print {"sandbox_id", "container_id"}
#   put SANDBOX SCRIPT   run sh -c SCRIPT in the Sandbox with this stdin
#                        (Sparrow's script applies a tar of workspace changes)
#   get SANDBOX SCRIPT   run sh -c SCRIPT in the Sandbox, its binary stdout
#                        to this stdout (Sparrow's script writes a tar)
import base64
import json
import sys

import modal


def create(cfg):
    app = modal.App.lookup(cfg["app"], create_if_missing=True)
    kw = dict(
        app=app,
        image=modal.Image.from_registry(cfg["image"]),
        timeout=cfg["timeout"],
        workdir=cfg["workdir"],
    )
    if cfg.get("block_network"):
        kw["block_network"] = True
    sb = modal.Sandbox.create(**kw)
    # `modal container exec` takes a container (task) id; the SDK exposes
    # the Sandbox's only through a private method, so use it when present.
    task = None
    get_task = getattr(sb, "_get_task_id", None)
    if get_task is not None:
        try:
            task = get_task()
        except Exception:
            task = None
    print(json.dumps({"sandbox_id": sb.object_id, "container_id": task}))


def put(sid, script):
    sb = modal.Sandbox.from_id(sid)
    p = sb.exec("sh", "-c", script)
    while True:
        chunk = sys.stdin.buffer.read(1 << 20)
        if not chunk:
            break
        p.stdin.write(chunk)
        p.stdin.drain()
    p.stdin.write_eof()
    p.stdin.drain()
    rc = p.wait()
    sys.stderr.write(p.stderr.read())
    sys.exit(rc)


def get(sid, script):
    sb = modal.Sandbox.from_id(sid)
    # base64 keeps the archive intact through the SDK's text streams.
    p = sb.exec("sh", "-c", "{ " + script + "; } | base64")
    out = p.stdout.read()
    rc = p.wait()
    sys.stderr.write(p.stderr.read())
    if rc == 0:
        sys.stdout.buffer.write(base64.b64decode(out))
    sys.exit(rc)


def main(argv):
    if argv[0] == "create":
        create(json.loads(argv[1]))
    elif argv[0] == "put":
        put(argv[1], argv[2])
    elif argv[0] == "get":
        get(argv[1], argv[2])
    else:
        sys.exit("unknown verb " + argv[0])


main(sys.argv[1:])
