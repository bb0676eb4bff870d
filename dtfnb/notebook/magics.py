"""`%load_ext dtfnb`: the %%cluster and %cluster magics, rich displays, the panel's comm.

```
%%cluster --name cluster --gpus 1
ps: 2
worker: 3
```

starts a LocalCluster of task processes and binds it to `cluster` in the notebook;
`--launcher ssh --python /opt/venv/bin/python` starts each task over ssh on the host its
address names (`worker: hostB:2222`) instead (dtfnb/launch/ssh.py); `--launcher srun` as
a job step of the allocation the notebook runs in, and `--launcher sbatch` as a batch job
(`--job-script` prints its script and starts nothing), both from task counts, with
`--slurm-option=--time=01:00:00` for Slurm (dtfnb/launch/slurm.py).
The body may also be the chapter's ClusterSpec dict, `{"ps": ["127.0.0.1:2221"], ...}`
(read with ast.literal_eval: it is data, never run). `--link 100Mbit,2ms --link
ps:0=1Gbit --slow worker:2=x3` emulate network links and slow tasks (LocalCluster's
`link`, `links` and `slow`). `%cluster list`, `%cluster status`,
`%cluster stop [NAME] [--all]` and `%cluster logs JOB TASK` manage what is running.

`%board LOGDIR` shows TensorBoard on a log directory (board.py), in TensorBoard's own
notebook frame.
"""

import ast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import MagicArgumentParser
from IPython.display import display

from dtfnb.launch import SbatchLauncher, SrunLauncher, SSHLauncher, live_clusters
from dtfnb.launch.cluster import addresses
from dtfnb.launch.forkserver import fork_server
from dtfnb.notebook import reprs
from dtfnb.notebook.board import tensorboard, tensorboard_module
from dtfnb.notebook.launcher import Cluster, LocalCluster
from dtfnb.notebook.progress import in_notebook
from dtfnb.notebook.widgets import ClusterView

_panel = None


def _cell_parser():
    parser = MagicArgumentParser(prog="%%cluster", description="Start a cluster.")
    parser.add_argument("--name", default="cluster",
                        help="the variable the cluster is bound to (default: cluster)")
    parser.add_argument("--host", default="127.0.0.1", help="the address tasks bind")
    parser.add_argument("--ports", help="one port per task, comma-separated")
    parser.add_argument("--port-base", type=int, help="consecutive ports from this one")
    parser.add_argument("--cpus", type=int, default=1, help="CPU devices per task")
    parser.add_argument("--gpus", type=int, default=0, help="emulated GPUs per task")
    parser.add_argument("--link", action="append", default=[], metavar="[TASK=]SPEC",
                        help="emulated network link, BANDWIDTH[,LATENCY] such as "
                             "100Mbit,2ms: of every task, or of one task (ps:0=1Gbit) or "
                             "job (ps=1Gbit); repeatable")
    parser.add_argument("--slow", action="append", default=[], metavar="TASK=SPEC",
                        help="emulated slow task or job: worker:2=x3, worker=+20ms or "
                             "worker=pareto:1.5,10ms; repeatable")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds that starting may take")
    parser.add_argument("--launcher", choices=sorted(LAUNCHERS), default="local",
                        help="what starts the tasks: local (forked here, the default), "
                             "ssh (on the host each address names), srun (a job step of "
                             "this allocation) or sbatch (a batch job)")
    parser.add_argument("--python", help="ssh, srun, sbatch: the interpreter on the hosts "
                                         "(ssh's default python3, Slurm's this one)")
    parser.add_argument("--ssh-user", help="ssh: the login name on the hosts")
    parser.add_argument("--ssh-port", type=int, help="ssh: sshd's port on the hosts")
    parser.add_argument("--ssh-identity", help="ssh: the private key file (ssh -i)")
    parser.add_argument("--ssh-option", action="append", default=[], metavar="OPTION",
                        help="ssh: an `ssh -o` option, such as StrictHostKeyChecking=yes; "
                             "repeatable")
    parser.add_argument("--slurm-option", action="append", default=[], metavar="OPTION",
                        help="srun, sbatch: an option of srun or an #SBATCH line, written "
                             "--slurm-option=--time=01:00:00; repeatable")
    parser.add_argument("--job-script", action="store_true",
                        help="sbatch: print the batch script the cell would submit, and "
                             "start nothing")
    return parser


def _ssh(args):
    return SSHLauncher(python=args.python or "python3", user=args.ssh_user,
                       port=args.ssh_port, identity=args.ssh_identity,
                       options=args.ssh_option)


def _srun(args):
    return SrunLauncher(python=args.python, port_base=args.port_base,
                        options=args.slurm_option)


def _sbatch(args):
    return SbatchLauncher(python=args.python, port_base=args.port_base,
                          options=args.slurm_option)


# --launcher NAME -> (the launcher from the cell's options, or None: a LocalCluster's own;
# the launcher's own options).
_SSH_OPTIONS = ("python", "ssh_user", "ssh_port", "ssh_identity", "ssh_option")
LAUNCHERS = {"local": (None, ()), "ssh": (_ssh, _SSH_OPTIONS),
             "srun": (_srun, ("python", "slurm_option")),
             "sbatch": (_sbatch, ("python", "slurm_option", "job_script"))}
_LAUNCHER_OPTIONS = sorted({name for _, names in LAUNCHERS.values() for name in names})


def _line_parser():
    parser = MagicArgumentParser(prog="%cluster",
                                 description="list | status | stop | logs JOB TASK")
    parser.add_argument("command", choices=("list", "status", "stop", "logs"))
    parser.add_argument("args", nargs="*", help="stop: [NAME]; logs: JOB TASK")
    parser.add_argument("--all", action="store_true", help="stop: every cluster")
    parser.add_argument("--name", help="the cluster (default: the last started)")
    return parser


def _board_parser():
    parser = MagicArgumentParser(prog="%board",
                                 description="Show TensorBoard on a log directory.")
    parser.add_argument("logdir", help="the log directory (TensorBoard's --logdir)")
    parser.add_argument("--port", type=int, default=0,
                        help="the port on 127.0.0.1 (default: one the system picks)")
    parser.add_argument("--height", type=int, default=800,
                        help="the height of its frame in pixels (default: 800)")
    return parser


CELL_PARSER, LINE_PARSER, BOARD_PARSER = _cell_parser(), _line_parser(), _board_parser()


def parse_cluster(text):
    """The cluster that a %%cluster body describes: the ClusterSpec dict as a Python
    literal, or one `job: count` (or `job: host:port, host:port`) line per job."""
    body = "\n".join(line for line in text.splitlines()
                     if line.strip() and not line.lstrip().startswith("#"))
    if not body:
        raise UsageError("%%cluster needs a cluster: lines such as `ps: 2` and `worker: 3`, "
                         "or a dict such as {'ps': ['127.0.0.1:2222']}")
    if body.lstrip().startswith("{"):
        try:
            cluster = ast.literal_eval(body.strip())
        except (ValueError, SyntaxError) as err:
            raise UsageError(f"The %%cluster body is not a dict literal: {err}") from None
        if not isinstance(cluster, dict):
            raise UsageError("The %%cluster body must be one dict of job names")
        return cluster
    cluster = {}
    for line in body.splitlines():
        job, colon, tasks = (part.strip() for part in line.partition(":"))
        if not colon or not job or not tasks:
            raise UsageError(f"Cannot read {line.strip()!r}: write `job: count` or "
                             "`job: host:port, host:port`")
        if job in cluster:
            raise UsageError(f"Job {job!r} is given twice")
        if tasks.isdigit():
            cluster[job] = int(tasks)
        else:
            cluster[job] = [address.strip() for address in tasks.split(",")]
    return cluster


@magics_class
class ClusterMagics(Magics):
    """The `%cluster` / `%%cluster` magics: start, show and stop local clusters in a notebook."""
    def __init__(self, shell):
        super().__init__(shell)
        self._views = {}   # cluster name -> its ClusterView

    @line_cell_magic
    def cluster(self, line, cell=None):
        """%%cluster [--name NAME] [--host HOST] [--ports P,P,...|--port-base P] [--cpus N]
        [--gpus N] [--link [TASK=]SPEC]... [--slow TASK=SPEC]... [--launcher local|ssh
        [--python PATH] [--ssh-user U] [--ssh-port P] [--ssh-identity FILE]
        [--ssh-option OPT]...] [--launcher srun|sbatch [--python PATH]
        [--slurm-option OPT]... [--job-script]]: start the cluster of the cell's body, one
        process per task (here, over ssh on the hosts its addresses name, or as the tasks
        of a Slurm job step), with emulated links and slow tasks.
        %cluster list | status [NAME] | stop [NAME] [--all] | logs JOB TASK [--name NAME]"""
        if cell is None:
            return self._command(LINE_PARSER.parse_argstring(line))
        args = CELL_PARSER.parse_argstring(line)
        if not args.name.isidentifier():
            raise UsageError(f"--name {args.name!r} is not a Python variable name")
        spec = parse_cluster(cell)
        ports = None
        if args.ports:
            try:
                ports = [int(port) for port in args.ports.split(",")]
            except ValueError:
                raise UsageError(f"--ports {args.ports!r}: give numbers, such as "
                                 "2221,2222,2223") from None
        link, links = None, {}
        for option in args.link:
            where, equals, text = option.rpartition("=")
            if equals:
                links[where] = text
            else:
                link = text
        slow = {}
        for option in args.slow:
            where, equals, text = option.partition("=")
            if not equals:
                raise UsageError(f"--slow {option!r}: name the task or job, such as "
                                 "worker:2=x3 or worker=+20ms")
            slow[where] = text
        make_launcher, own_options = LAUNCHERS[args.launcher]
        foreign = [f"--{name.replace('_', '-')}" for name in _LAUNCHER_OPTIONS
                   if getattr(args, name) and name not in own_options]
        if foreign:
            raise UsageError(f"{', '.join(foreign)}: not with --launcher {args.launcher}")
        launcher = make_launcher(args) if make_launcher is not None else None
        if launcher is not None and launcher.picks_addresses:
            if args.host != "127.0.0.1" or args.ports:
                raise UsageError(f"--launcher {args.launcher} picks the addresses: give no "
                                 "--host or --ports")
            if not all(isinstance(tasks, int) for tasks in spec.values()):
                raise UsageError(f"--launcher {args.launcher} picks the addresses: give task "
                                 "counts, such as `worker: 2`")
            if args.job_script:
                print(launcher.job_script(spec), end="")
                return
        for old in live_clusters():   # running the cell again replaces its cluster
            if old.name == args.name:
                self._stop(old)
        options = dict(name=args.name, cpus=args.cpus, gpus=args.gpus, link=link, links=links,
                       slow=slow, timeout=args.timeout, progress=True)
        try:
            if launcher is None:
                cluster = LocalCluster(spec, host=args.host, ports=ports,
                                       port_base=args.port_base, **options)
            elif launcher.picks_addresses:
                cluster = Cluster(spec, launcher, **options)
            else:
                cluster = Cluster(addresses(spec, args.host, ports, args.port_base),
                                  launcher, **options)
        except (TypeError, ValueError) as err:
            raise UsageError(str(err)) from None
        self.shell.user_ns[args.name] = cluster
        if in_notebook():
            self._views[args.name] = view = ClusterView(cluster)
            display(view)
        else:
            display(cluster)

    def _command(self, args):
        if args.command == "list":
            clusters = live_clusters()
            print("\n".join(repr(c) for c in clusters) if clusters else "No cluster is running.")
            return
        if args.command == "stop" and args.all:
            for cluster in live_clusters():
                self._stop(cluster)
            return
        if args.command in ("status", "stop") and args.args:
            args.name = args.args[0]
        cluster = self._find(args.name)
        if args.command == "stop":
            self._stop(cluster)
        elif args.command == "status":
            print(repr(cluster))
            for task in cluster.tasks:
                emulated = f"  emulated: {task.emulated}" if task.emulated else ""
                print(f"  {task.name}  {task.state:<8}  {cluster.target(task.job, task.index)}"
                      f"{emulated}")
        else:
            if len(args.args) != 2 or not args.args[1].isdigit():
                raise UsageError("Usage: %cluster logs JOB TASK [--name NAME]")
            print(cluster.logs(args.args[0], int(args.args[1])))

    def _find(self, name):
        clusters = [c for c in live_clusters() if name is None or c.name == name]
        if not clusters:
            raise UsageError(f"No cluster {name!r} is running" if name else
                             "No cluster is running: start one with %%cluster")
        return clusters[-1]

    def _stop(self, cluster):
        cluster.stop()
        view = self._views.pop(cluster.name, None)
        if view is not None:
            view.close()


@magics_class
class BoardMagics(Magics):
    """The `%board` magic: TensorBoard on a log directory, started or reused."""

    @line_magic
    def board(self, line):
        """%board LOGDIR [--port P] [--height PX]: shows this kernel's TensorBoard on
        LOGDIR, started (on 127.0.0.1) if none runs, in TensorBoard's own notebook frame;
        outside a notebook, its address."""
        args = BOARD_PARSER.parse_argstring(line)
        try:
            board = tensorboard(args.logdir, args.port)
            notebook = tensorboard_module("notebook")
        except (ImportError, RuntimeError, TimeoutError) as err:
            raise UsageError(str(err)) from None
        notebook.display(port=board.port, height=args.height)


def load(shell):
    """What `%load_ext dtfnb` does."""
    global _panel
    shell.register_magics(ClusterMagics, BoardMagics)
    reprs.register(shell)
    fork_server()   # imports dtfnb in the background, before the first %%cluster
    if getattr(shell, "kernel", None) is not None and _panel is None:
        from dtfnb.notebook.panel import Panel

        _panel = Panel(shell)
        _panel.start()


def unload(shell):
    """What `%unload_ext dtfnb` does: the magics, displays and the panel's comm go away
    (running clusters keep running)."""
    global _panel
    for kind, name in (("line", "cluster"), ("cell", "cluster"), ("line", "board")):
        shell.magics_manager.magics[kind].pop(name, None)
    reprs.unregister(shell)
    if _panel is not None:
        _panel.stop()
        _panel = None
