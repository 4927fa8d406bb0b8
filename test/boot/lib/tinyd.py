#!/usr/bin/python3
# A stand-in for a daemon that listens on a TCP port, in the shapes real
# daemons take: foreground (Type=simple), double-forking with or without a
# PID file (Type=forking), or a parent that leaves the listening to a child
# (a unit's helper). Usage: tinyd [--daemon] [--pidfile F] [--child] PORT
import os, socket, sys, time

args = sys.argv[1:]
daemon = '--daemon' in args
child = '--child' in args
pidfile = None
if '--pidfile' in args:
    pidfile = args[args.index('--pidfile') + 1]
port = int(args[-1])

def serve():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', port))
    s.listen(5)
    while True:
        time.sleep(3600)

if daemon:
    if os.fork() > 0:
        # The parent returns once the daemon listens, as forking daemons do.
        for _ in range(100):
            if os.system(f"ss -ltnH 'sport = :{port}' | grep -q ." ) == 0: break
            time.sleep(0.05)
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    if pidfile:
        with open(pidfile, 'w') as f:
            f.write(f'{os.getpid()}\n')
    serve()
elif child:
    pid = os.fork()
    if pid == 0:
        serve()
    os.waitpid(pid, 0)
else:
    serve()
