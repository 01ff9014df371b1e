"""A busy HTTP port (issue 15.8): the server says which port and how to choose another, not uvicorn's
raw `[Errno 98]`, and exits 2."""

import socket
import subprocess

from core_helpers import env, serve_command


def test_busy_port_says_which_and_how_to_choose_another():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(serve_command("--http", "--port", str(port)), env=env(), capture_output=True, text=True,
                              timeout=120)
    assert proc.returncode == 2
    assert f"Port {port} on 127.0.0.1 is already in use" in proc.stderr and "--port N (or ACP_PORT=N)" in proc.stderr
    assert "Errno 98" not in proc.stderr and "Traceback" not in proc.stderr
