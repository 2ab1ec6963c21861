"""An encrypted private key gives the documented "add it to ssh-agent" message (issue 17,
item 5), not paramiko 5's ``TypeError`` traceback: new-format OpenSSH ed25519 and PEM RSA keys
with a passphrase, made by ssh-keygen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.transport.ssh import SshTransport
from eagle_tui.transport.ssh.keys import is_encrypted_key, load_key
from eagle_tui.transport.ssh.link import AuthError

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"ed25519": ["-t", "ed25519"], "rsa-pem": ["-t", "rsa", "-b", "2048", "-m", "PEM"],
         "ecdsa": ["-t", "ecdsa"]}


def _key(tmp_path: Path, kind: str, passphrase: str) -> Path:
    path = tmp_path / f"{kind}-{'enc' if passphrase else 'plain'}"
    subprocess.run(["ssh-keygen", "-q", *KINDS[kind], "-N", passphrase, "-C", "t",
                    "-f", str(path)], check=True, stdin=subprocess.DEVNULL)
    return path


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_encrypted_key_is_noted_not_raised(tmp_path: Path, kind: str) -> None:

    enc, plain = _key(tmp_path, kind, "secret"), _key(tmp_path, kind, "")
    assert is_encrypted_key(str(enc)) and not is_encrypted_key(str(plain))
    notes: list[str] = []
    assert load_key(str(enc), (str(enc),), notes) is None
    assert notes == [f"{enc}: encrypted (add it to ssh-agent: ssh-add {enc})"]
    assert load_key(str(plain), (), []) is not None


@pytest.mark.sshd
@pytest.mark.parametrize("kind", ["ed25519", "rsa-pem"])
async def test_connecting_with_an_encrypted_key_says_add_it_to_the_agent(
        sshd: Any, tmp_path: Path, kind: str) -> None:
    enc = _key(tmp_path, kind, "secret")
    t = SshTransport(sshd.target().dest, sshd.options(identity_files=(str(enc),)),
                     target=sshd.target())
    with pytest.raises(AuthError, match="encrypted \\(add it to ssh-agent: ssh-add"):
        await t.connect()
    await t.close()


@pytest.mark.sshd
def test_the_cli_prints_one_line_and_exits_2(sshd: Any, tmp_path: Path) -> None:
    enc = _key(tmp_path, "ed25519", "secret")
    args = sshd.cli_args()
    args[args.index("--identity") + 1] = str(enc)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    proc = subprocess.run([sys.executable, "-m", "eagle_tui", "wait", *args, "--log",
                           "/tmp/x.log", "--timeout", "20"], cwd=ROOT, env=env,
                          capture_output=True, timeout=60, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "add it to ssh-agent" in err and "Traceback" not in err and "TypeError" not in err
