"""The console's own line editing on a raw serial line: echo, backspace, Ctrl-U,
escape sequences swallowed, type-ahead, hidden input, Ctrl-C and Ctrl-D."""

from __future__ import annotations

import socket

import pytest

from controller.console.lineio import Cancelled, Channel, Closed, Idle, LineEditor


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    ed = LineEditor(Channel(a.detach(), name="test"))
    yield ed, b
    b.close()


def test_editing_and_echo(pair):
    ed, peer = pair
    peer.sendall(b"statx\x7fus\x1b[A\x1b[D please\x15meters\r\nhits\r")
    assert ed.readline("> ") == "meters"
    assert ed.readline("> ") == "hits"  # type-ahead kept for the next line
    echoed = peer.recv(4096)
    assert echoed.startswith(b"> statx\b \bus please") and b"meters\r\n> hits\r\n" in echoed


def test_hidden_input_and_control_keys(pair):
    ed, peer = pair
    peer.sendall(b"2468\r")
    assert ed.readline("PIN: ", echo=False) == "2468"
    assert b"2468" not in peer.recv(4096)
    peer.sendall(b"abc\x03")
    with pytest.raises(Cancelled):
        ed.readline("> ")
    peer.sendall(b"\x04")
    with pytest.raises(EOFError):
        ed.readline("> ")
    with pytest.raises(Idle):
        ed.readline("> ", idle_s=0.1)
    peer.close()
    with pytest.raises(Closed):
        ed.readline("> ")


def test_tab_completion(pair):
    ed, peer = pair
    peer.sendall(b"st\t\r")
    assert ed.readline("> ", complete=lambda buf: [w for w in ("status", "stop") if w.startswith(buf)]) == "st"
    assert b"status  stop\r\n> st" in peer.recv(4096)
    peer.sendall(b"me\t\r")
    assert ed.readline("> ", complete=lambda buf: ["meters"] if "meters".startswith(buf) else []) == "meters "


def test_arrow_keys_recall_earlier_command_lines(pair):
    """Command history with the arrow keys (history prompts only, never a PIN)."""
    ed, peer = pair
    peer.sendall(b"status\rmeters 1\r")
    assert ed.readline("> ", history=True) == "status"
    assert ed.readline("> ", history=True) == "meters 1"
    peer.sendall(b"\x1b[A\x1b[A\r")  # up twice: the line before last
    assert ed.readline("> ", history=True) == "status"
    peer.sendall(b"\x1b[A\x1b[A\x1b[A\x1b[B\r")  # up three times (past the oldest), down
    assert ed.readline("> ", history=True) == "meters 1"
    peer.sendall(b"2468\r")
    assert ed.readline("PIN: ", echo=False, history=True) == "2468"
    assert "2468" not in ed.history
    peer.sendall(b"\x1b[A\r")
    assert ed.readline("> ") == ""  # a prompt without history ignores the arrows


def test_an_over_long_line_is_refused_with_a_message_not_cut(pair):
    """Before: a line over the limit was silently cut to 200 characters and run."""
    ed, peer = pair
    peer.sendall(b"clear " + b"x" * 300 + b"\rstatus\r")
    assert ed.readline("> ") == "status"
    out = peer.recv(65536)
    assert b"error: line longer than 200 characters refused; nothing was done" in out


def test_digits_at_the_role_prompt_are_not_echoed(pair):
    ed, peer = pair
    peer.sendall(b"3333\r")
    assert ed.readline("role: ", mask_digits=True) == "3333"
    assert b"3333" not in peer.recv(4096)
