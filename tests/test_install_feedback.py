"""analytics-acp install feedback (13.1.1 step 3): what it waits for and for how long, a line every few
seconds on a terminal, --timeout, and a refusal that names what did not answer."""

import io

import pytest
from analytics_acp_build import cli
from analytics_acp_build.cli import install_main
from build_support import server_folder, zip_tree

FROZEN_SERVER_PY = "import sys\nfor _ in sys.stdin:  # reads requests, never answers one\n    pass\n"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def frozen_zip(tmp_path):
    folder = server_folder(tmp_path / "src")
    (folder / "server.py").write_text(FROZEN_SERVER_PY)
    return zip_tree(folder, tmp_path / "tinyconn-frozen.zip")


def test_a_server_that_never_answers_gets_progress_lines_and_an_explicit_refusal(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "PROGRESS_EVERY_S", 0.25)
    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    servers = tmp_path / "servers"
    assert install_main([str(frozen_zip(tmp_path)), "--dir", str(servers), "--timeout", "2"]) == 1
    lines = err.getvalue().splitlines()
    assert "Extracting" in lines[0] and "tinyconn-frozen.zip" in lines[0]
    assert "waiting up to 2 s for it to answer initialize and tools/list" in lines[1]
    assert "server.py" in lines[1]  # says what was started
    assert any("Still waiting for initialize:" in line and "of 2 s" in line for line in lines[2:])
    refusal = err.getvalue()
    assert "refused: tinyconn: The server (" in refusal and "did not answer initialize within 2 s" in refusal
    assert "--timeout" in refusal and "Nothing was changed." in refusal
    assert not servers.exists() or not any(servers.iterdir())  # no staging folder left behind


def test_outside_a_terminal_only_the_first_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "PROGRESS_EVERY_S", 0.1)
    assert install_main([str(frozen_zip(tmp_path)), "--dir", str(tmp_path / "servers"), "--timeout", "1.5"]) == 1
    err = capsys.readouterr().err
    assert "waiting up to 1.5 s" in err and "did not answer initialize within 1.5 s" in err
    assert "Still waiting" not in err  # a log file gets no ticker lines


def test_a_good_server_installs_with_the_same_feedback(tmp_path, capsys):
    src = server_folder(tmp_path / "src")
    assert install_main([str(zip_tree(src, tmp_path / "t.zip")), "--dir", str(tmp_path / "servers"), "--timeout", "120"]) == 0
    out = capsys.readouterr()
    assert "waiting up to 120 s" in out.err and out.out.startswith("Installed tinyconn 1.0.0")


@pytest.mark.parametrize("bad", ["0", "-5", "soon", "inf"])
def test_timeout_must_be_a_positive_number(tmp_path, bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        install_main([str(tmp_path / "x.zip"), "--dir", str(tmp_path), "--timeout", bad])
    assert exit_.value.code == 2 and "--timeout" in capsys.readouterr().err
