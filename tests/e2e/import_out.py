#!/usr/bin/env python3
"""Runs `grademl-tui import` on a pseudo-terminal, for tests/e2e/import_out.sh.

  import_out.py COLS OUT BIN import -o DB FILE...
      runs the command with stdin, stdout and stderr on a terminal of COLS
      columns and writes what it printed, byte for byte, to OUT; exits
      with the command's status.
  import_out.py COLS OUT --fifo SRC BIN import -o DB FIFO
      the same, FIFO a named pipe that this script fills with SRC's bytes:
      the first half, then, after a pause longer than the progress line's
      period, the rest, so that the import is seen waiting half-way.
"""
import fcntl
import os
import pty
import struct
import sys
import termios
import threading
import time


def feed(src, fifo):
    data = open(src, "rb").read()
    with open(fifo, "wb") as f:
        f.write(data[: len(data) // 2])
        f.flush()
        time.sleep(1.2)
        f.write(data[len(data) // 2 :])


def main():
    cols, out = int(sys.argv[1]), sys.argv[2]
    argv = sys.argv[3:]
    feeder = None
    if argv[0] == "--fifo":
        src, argv = argv[1], argv[2:]
        feeder = threading.Thread(target=feed, args=(src, argv[-1]))
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
        os.execv(argv[0], argv)
    if feeder:
        feeder.start()
    text = b""
    while True:
        try:
            b = os.read(fd, 65536)
        except OSError:
            break
        if not b:
            break
        text += b
    _, status = os.waitpid(pid, 0)
    if feeder:
        feeder.join()
    with open(out, "wb") as f:
        f.write(text)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
