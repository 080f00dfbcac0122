# stvm-gdb.py: gdb commands for programs built on stvm (docs/debugging.md, "gdb").
#
#   info stvm-processes      every process of every VM: id, priority, state, name, entry
#                            function, CPU time, what it waits on (kind, name, handle; the
#                            owner of a mutex or monitor) and for how long
#   stvm-bt ID|NAME|all|host [BACKTRACE-OPTIONS]
#                            the backtrace of a process that is not running, unwound from
#                            its saved context down to its entry function ("host": the
#                            thread that called stvm_run, while a process runs)
#   stvm-vm                  each VM's run queues, next deadline, timing process, pending
#                            external signals, descriptors and sockets
#   stvm-gcore [FILE]        generate-core-file for a live program, with the green stacks
#                            (which gdb's own loses behind madvise guard regions)
#
# `make install` puts this file where gdb auto-loads it for the installed library
# (DATADIR/gdb/auto-load/LIBDIR/libstvm.so.VERSION-gdb.py); with the static library,
# `source` it (`source /usr/local/share/stvm/gdb/stvm-gdb.py`, or scripts/gdb/stvm-gdb.py
# in the source tree). It reads the library's own structures through its debug info, so
# it works the same on a live process and on a core file, and (but for stvm-gcore,
# which must lift guard regions) never writes to the program: a backtrace of a process is made by a frame unwinder that, while the command
# runs, answers the thread's top frame's caller with the registers the process's switch
# saved (the registers and the selected frame are never touched).
#
# It mirrors private structures of vm/vm.h, vm/objects.h and scheduler/ (the constants
# below name their homes); vm/debugger.h's STVM_DEBUG_VERSION says which layout this file
# reads, and make check's gdb-check (mk/gdb.mk, scripts/gdb-check.sh) runs the commands
# on a deadlocked example, live and on its core file, on both back ends.

import datetime
import re

import gdb
import gdb.unwinder

DEBUG_VERSION = 1

# vm/objects.h: list kinds, semaphore roles, wait labels, process flags
LIST_RUNQ, LIST_SEMAPHORE, LIST_MUTEX, LIST_JOIN, LIST_MONITOR, LIST_MONITOR_QUEUE = 1, 2, 3, 4, 5, 6
SEM_QUEUE_ITEMS, SEM_QUEUE_ROOM = 1, 2
WL_DELAY = 1
PF_VM_OWN, PF_TERMINATE, PF_EXITING = 1 << 1, 1 << 2, 1 << 3
GUARD_MADVISE = 1
# include/stvm/core.h: stvm_wait_kind, in order
WAIT_KINDS = ["nothing", "semaphore", "mutex", "monitor", "monitor condition", "queue item",
              "queue room", "delay", "socket read", "socket write", "socket accept",
              "socket connect", "fd", "join", "callout"]
(W_NOTHING, W_SEMAPHORE, W_MUTEX, W_MONITOR, W_MONITOR_CONDITION, W_QUEUE_ITEM, W_QUEUE_ROOM,
 W_DELAY, W_SOCKET_READ, W_SOCKET_WRITE, W_SOCKET_ACCEPT, W_SOCKET_CONNECT, W_FD, W_JOIN,
 W_CALLOUT) = range(15)
# include/stvm/core.h: STVM_ERRNO_MAP, the answers stvm_run gives
RUN_RESULTS = {0: "STVM_OK", 1: "1 (processes remain)", -3: "STVM_EDEADLOCK", -15: "STVM_ESTOPPED"}
US_FROM_1901_TO_1970 = 2177452800000000
EXT_CHUNK_SLOTS = 256   # vm/vm.h
IO_READ, IO_WRITE = 1, 2   # STVM_IO_* (include/stvm/net.h)


class StvmError(gdb.GdbError):
    pass


def _type(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        raise StvmError("stvm: no debug information for '%s': the library was built without "
                        "-g or stripped (docs/debugging.md, \"Without debug information\")" % name)


def _offset(type_name, *path):
    t = _type(type_name).strip_typedefs()
    off = 0
    for name in path:
        f = [x for x in t.fields() if x.name == name][0]
        off += f.bitpos // 8
        t = f.type.strip_typedefs()
    return off


def _container(addr, type_name, *path):
    """The object of type_name whose member path is at addr (STVM_CONTAINER)."""
    return gdb.Value(int(addr) - _offset(type_name, *path)).cast(_type(type_name).pointer())


def _u(v):
    return int(v) & 0xFFFFFFFFFFFFFFFF


def _cstr(v):
    try:
        return v.string(length=-1) if int(v) else None
    except gdb.error:
        return "<unreadable>"


def _duration(us):
    if us >= 10 * 1000000:
        return "%.1f s" % (us / 1e6)
    if us >= 1000:
        return "%.1f ms" % (us / 1e3)
    return "%d us" % us


def _is_core():
    """Is gdb looking at a core file (not a live process)?"""
    try:
        conn = gdb.selected_inferior().connection
        return conn is not None and conn.type == "core"
    except AttributeError:   # gdb before 11
        return "core file" in gdb.execute("info target", to_string=True)


def _symbol(addr):
    """The function at addr, by name ('meteo'), or its address."""
    addr = _u(addr)
    if not addr:
        return "-"
    try:
        block = gdb.block_for_pc(addr)
        while block is not None and block.function is None:
            block = block.superblock
        if block is not None:
            return block.function.name
    except RuntimeError:
        pass
    m = re.search(r"<([^+>]*)", str(gdb.Value(addr).cast(_type("void").pointer())))
    return m.group(1) if m else "0x%x" % addr


# ---- finding the VMs (vm/debugger.h) ------------------------------------------------

def _registries():
    """(debug info, the list's head) of each copy of the library in the program."""
    found, seen = [], set()
    for objfile in gdb.objfiles():
        try:
            head = objfile.lookup_global_symbol("stvm__debug_vms")
        except (AttributeError, gdb.error):
            head = None
        if head is None:
            continue
        addr = int(head.value().address)
        if addr in seen:
            continue
        seen.add(addr)
        info = objfile.lookup_global_symbol("stvm__debug_info")
        found.append((info.value() if info is not None else None, head.value()))
    if not found:
        try:   # a program gdb found no objfile symbol in, but which has the name
            found.append((gdb.parse_and_eval("stvm__debug_info"),
                          gdb.parse_and_eval("stvm__debug_vms")))
        except gdb.error:
            pass
    return found


class VM:
    """One VM of the program, read from its stvm_vm."""

    def __init__(self, ptr, info):
        self.ptr = ptr
        self.v = ptr.dereference()
        self.info = info
        self.backend = _cstr(info["backend"]) if info is not None else "?"
        self.switch_words = int(info["switch_words"]) if info is not None else 6
        self.now = _u(self.v["point_clock_us"])
        self._names = None

    def processes(self):
        """Every unfinished process, oldest first (vm->all holds the newest first). A record
        lives in the top of its process's stack: one that does not read back as this VM's
        (zeros, where a core lacks the stacks) ends the walk, with a warning."""
        out, p, n = [], self.v["all"], 0
        try:
            while int(p) and n < 10000000:
                if _u(p["vm"]) != _u(self.ptr):
                    self.warn("the record at 0x%x does not read as a process of this VM" % _u(p))
                    break
                out.append(p)
                p = p["all_next"]
                n += 1
        except gdb.MemoryError:
            self.warn("the record at 0x%x cannot be read" % _u(p))
        out.reverse()
        return out

    def warn(self, what):
        print("stvm: VM 0x%x: %s: the processes' records live in their stacks, and this %s "
              "lacks them (a core from gdb's generate-core-file, behind madvise guard regions: "
              "write one with stvm-gcore, or use the kernel's; docs/debugging.md)"
              % (_u(self.ptr), what, "core" if _is_core() else "program"))

    def name_of(self, addr):
        """The name given with stvm_*_set_name (vm/names.c), or None."""
        if self._names is None:
            self._names = {}
            names = self.v["names"]
            cap = int(names["cap"])
            if cap and int(names["keys"]):
                mem = gdb.selected_inferior().read_memory(names["keys"], cap * 8)
                keys = memoryview(mem).cast("Q")
                for i in range(cap):
                    if keys[i] > 1:
                        self._names[keys[i]] = _cstr(names["values"][i])
        return self._names.get(_u(addr))

    def running(self):
        return bool(self.v["running"])

    def describe(self):
        clock = "simulated clock" if int(self.v["clock"]["kind"]) == 1 else "real clock"
        if self.running():
            run = "running"
        else:
            res = int(self.v["run_result"])
            run = "not running (the last run answered %s)" % RUN_RESULTS.get(res, str(res))
        return "VM 0x%x: %s back end, %s, %s" % (_u(self.ptr), self.backend, clock, run)


def vms():
    out = []
    for info, head in _registries():
        if info is not None and int(info["version"]) != DEBUG_VERSION:
            raise StvmError("stvm: this extension reads layout %d, the library has %d: use the "
                            "stvm-gdb.py installed with it" % (DEBUG_VERSION, int(info["version"])))
        # The head is kept complemented (vm/debugger.h: no pointer for LeakSanitizer).
        first = (~int(head)) & 0xFFFFFFFFFFFFFFFF
        vm, n = gdb.Value(first).cast(_type("stvm_vm").pointer()), 0
        while int(vm) and n < 100000:
            out.append(VM(vm, info))
            vm = vm["debug_next"]
            n += 1
    return out


def _vms_or_say():
    found = vms()
    if not found:
        if not _registries():
            raise StvmError("stvm: this program has no stvm library with debug information "
                            "(no symbol stvm__debug_vms)")
        print("stvm: no live VM (none made yet, or every one freed)")
    return found


# ---- one process --------------------------------------------------------------------

class Proc:
    def __init__(self, vm, p):
        self.vm, self.p = vm, p
        h = p["handle"]
        self.handle = h
        self.name = _cstr(h["name"]) or ""
        self.id = int(p["id"])
        self.priority = int(p["priority"])
        self.flags = int(p["flags"])
        self.vm_own = bool(self.flags & PF_VM_OWN)

    def label(self):
        return "'%s' (#%d)" % (self.name, self.id) if self.name else "#%d" % self.id

    def is_active(self):
        return _u(self.vm.v["active"]) == _u(self.p)

    def state(self):
        lst = self.p["my_list"]
        if self.is_active():
            return "running"
        if not int(lst):
            return "suspended"
        return "ready" if int(lst["kind"]) == LIST_RUNQ else "waiting"

    def wait(self):
        """(kind, handle address or 0, fd) as scheduler/process_info.c's wait_of says."""
        p, lst = self.p, self.p["my_list"]
        if not int(lst) or int(lst["kind"]) == LIST_RUNQ:
            return W_NOTHING, 0, -1
        if int(p["wait_on_kind"]):
            kind = int(p["wait_on_kind"])
            return kind, _u(p["wait_on"]), int(p["wait_fd"]) if kind == W_FD else -1
        kind = int(lst["kind"])
        if kind == LIST_SEMAPHORE:
            s = _container(lst, "stvm_semaphore", "list")
            role = int(s["role"])
            if role == SEM_QUEUE_ITEMS:
                return W_QUEUE_ITEM, _u(_container(s, "stvm_queue", "avail")), -1
            if role == SEM_QUEUE_ROOM:
                return W_QUEUE_ROOM, _u(_container(s, "stvm_queue", "room")), -1
            if int(p["wait_label"]) == WL_DELAY:
                return W_DELAY, 0, -1
            return W_SEMAPHORE, _u(s), -1
        if kind == LIST_MUTEX:
            return W_MUTEX, _u(_container(lst, "stvm_mutex", "list")), -1
        if kind == LIST_MONITOR:
            return W_MONITOR, _u(_container(lst, "stvm_mutex", "list")), -1
        if kind == LIST_MONITOR_QUEUE:
            return W_MONITOR_CONDITION, _u(_container(lst, "stvm_monitor_queue", "list")["monitor"]), -1
        if kind == LIST_JOIN:
            return W_JOIN, _u(_container(lst, "stvm_process", "joiners")), -1
        return W_NOTHING, 0, -1

    def owner(self, kind, handle):
        """The process that holds what this one waits for: a mutex's or monitor's owner, the
        process a join waits for; None."""
        if kind in (W_MUTEX, W_MONITOR) and handle:
            o = gdb.Value(handle).cast(_type("stvm_mutex").pointer())["owner"]
            return Proc(self.vm, o) if int(o) else None
        if kind == W_JOIN and handle:
            core = gdb.Value(handle).cast(_type("stvm_process").pointer())["core"]
            return Proc(self.vm, core) if int(core) else None
        return None

    def waits_on(self):
        kind, handle, fd = self.wait()
        if kind == W_NOTHING:
            return ""
        text = WAIT_KINDS[kind] if kind < len(WAIT_KINDS) else "kind %d" % kind
        if kind == W_FD:
            text += " %d" % fd
        if kind == W_JOIN and handle:
            h = gdb.Value(handle).cast(_type("stvm_process").pointer())
            text += " '%s'" % (_cstr(h["name"]) or "")
        else:
            name = self.vm.name_of(handle) if handle else None
            if name is not None:
                text += " '%s'" % name
        if handle:
            text += " 0x%x" % handle
        o = self.owner(kind, handle)
        if o is not None and kind != W_JOIN:
            text += ", owned by %s" % o.label()
        since = _u(self.p["wait_since_us"])
        if since and self.vm.now >= since:
            text += ", for %s" % _duration(self.vm.now - since)
        return text

    def cpu(self):
        """The CPU time charged to it (stvm_process_info.cpu_ns), or None when the VM does
        not account (stvm_config.cpu_time)."""
        try:
            if not bool(self.vm.v["cfg"]["cpu_time"]):
                return None
            return _u(self.p["cpu_ns"])
        except gdb.error:
            return None


# ---- info stvm-processes ----------------------------------------------------------

class InfoProcesses(gdb.Command):
    """List every process of every stvm VM in the program.
Usage: info stvm-processes
One line per unfinished process, oldest first: its id, priority, state (running, ready,
waiting, suspended), name, entry function, CPU time on its VM's thread (when the VM
accounts it: stvm_config.cpu_time; the running process's without the slice it is in)
and what it waits on: the kind of wait, the object's
name and the handle the program holds, the owner of a mutex or monitor, and for how long
(up to the VM's last clock reading). '*' marks the running process."""

    def __init__(self):
        super().__init__("info stvm-processes", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        for vm in _vms_or_say():
            procs = [Proc(vm, p) for p in vm.processes()]
            print("%s, %d processes" % (vm.describe(), len(procs)))
            rows = []
            for pr in procs:
                cpu = pr.cpu()
                rows.append(("*" if pr.is_active() else " ", str(pr.id), str(pr.priority),
                             pr.state(), pr.name, _symbol(pr.p["fn"]),
                             "-" if cpu is None else "%.3f" % (cpu / 1e6), pr.waits_on()))
            head = (" ", "Id", "Pri", "State", "Name", "Entry", "CPU ms", "Waits on")
            widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
            for r in [head] + rows:
                print(("%s %*s %*s  %-*s  %-*s  %-*s %*s  %s" % (
                    r[0], widths[1], r[1], widths[2], r[2], widths[3], r[3], widths[4], r[4],
                    widths[5], r[5], widths[6], r[6], r[7])).rstrip())


# ---- stvm-bt: unwinding a switched-out process -------------------------------------

class _FrameId:
    def __init__(self, sp, pc):
        self.sp, self.pc = sp, pc


class GreenUnwinder(gdb.unwinder.Unwinder):
    """While stvm-bt runs (and only then), answers the caller of the thread's top frame
    with the registers a switched-out context holds, so that gdb's own unwinder walks
    the process's stack from there. Off, it looks at nothing."""

    def __init__(self):
        super().__init__("stvm-process")
        self.regs = None   # {register name: value} while active
        self.top = None    # (sp, pc) of the thread's top frame

    def __call__(self, pending):
        if self.regs is None:
            return None
        sp, pc = self.top_regs
        if _u(pending.read_register(sp)) != self.top[0] or \
                _u(pending.read_register(pc)) != self.top[1]:
            return None
        info = pending.create_unwind_info(_FrameId(pending.read_register(sp),
                                                   pending.read_register(pc)))
        for name, value in self.regs.items():
            info.add_saved_register(name, gdb.Value(value).cast(pending.read_register(name).type))
        return info


_unwinder = GreenUnwinder()
gdb.unwinder.register_unwinder(None, _unwinder, replace=True)


def _arch():
    name = gdb.selected_inferior().architecture().name()
    if "x86-64" in name:
        return "x86_64"
    if "aarch64" in name:
        return "aarch64"
    raise StvmError("stvm: stvm-bt knows x86-64 and aarch64, not %s" % name)


def _read_words(addr, n):
    mem = gdb.selected_inferior().read_memory(addr, n * 8)
    return list(memoryview(mem).cast("Q"))


def _saved_regs(vm, ctx_sp, uctx):
    """The registers of a switched-out context: the assembly switch's saved words at
    ctx_sp (switch_x86_64.S, switch_aarch64.S), or the ucontext_t swapcontext wrote."""
    arch = _arch()
    if _u(uctx):
        mc = uctx.cast(_type("ucontext_t").pointer())["uc_mcontext"]
        if arch == "x86_64":
            g = mc["gregs"]   # REG_R12 = 4 ... REG_RIP = 16 (<sys/ucontext.h>)
            return {"r12": _u(g[4]), "r13": _u(g[5]), "r14": _u(g[6]), "r15": _u(g[7]),
                    "rbp": _u(g[10]), "rbx": _u(g[11]), "rsp": _u(g[15]), "rip": _u(g[16])}
        regs = {"x%d" % i: _u(mc["regs"][i]) for i in range(19, 31)}
        regs.update({"sp": _u(mc["sp"]), "pc": _u(mc["pc"])})
        return regs
    sp = _u(ctx_sp)
    if not sp:
        raise StvmError("stvm: no saved context (a process that never switched out)")
    if arch == "x86_64":
        words = vm.switch_words   # [MXCSR/x87,] r15, r14, r13, r12, rbx, rbp, then the return
        w = _read_words(sp + (words - 6) * 8, 7)
        return {"r15": w[0], "r14": w[1], "r13": w[2], "r12": w[3], "rbx": w[4], "rbp": w[5],
                "rip": w[6], "rsp": sp + (words + 1) * 8}
    words = vm.switch_words       # [FPCR slot,] x19..x28, x29, x30, d8..d15
    w = _read_words(sp + (words - 20) * 8, 12)
    regs = {"x%d" % (19 + i): w[i] for i in range(12)}
    regs.update({"sp": sp + words * 8, "pc": w[11]})
    return regs


# Where a process that never ran would resume: its first frame calls its entry from
# there (scheduler/context.c, first_frame), and no caller frame lies above it.
FIRST_FRAMES = ("stvm__trampoline_asm", "uc_trampoline")


def _never_ran(regs):
    pc = regs.get("rip", regs.get("pc", 0))
    for name in FIRST_FRAMES:
        try:
            if _u(gdb.parse_and_eval("&%s" % name)) == pc:
                return True
        except gdb.error:
            pass
    return False


def _backtrace_from(regs, bt_args):
    """gdb's backtrace of a stack whose top registers are regs, numbered from 0."""
    arch = _arch()
    names = ("rsp", "rip") if arch == "x86_64" else ("sp", "pc")
    top = gdb.newest_frame()
    _unwinder.top_regs = names
    _unwinder.top = (_u(top.read_register(names[0])), _u(top.read_register(names[1])))
    _unwinder.regs = regs
    gdb.invalidate_cached_frames()
    try:
        text = gdb.execute("backtrace %s" % bt_args, to_string=True)
        # The frames up to the one claimed (the thread's top, with the inline frames above
        # it) are the thread's own: the process's stack starts after them.
        level, f = 0, gdb.newest_frame()
        while f is not None and f.type() == gdb.INLINE_FRAME:
            f = f.older()
            level += 1
        skip = level + 1
    finally:
        _unwinder.regs = None
        gdb.invalidate_cached_frames()
    out, keep, entered = [], False, False
    for line in text.splitlines():
        m = re.match(r"#(\d+)(\s+)(.*)", line)
        if m:
            n = int(m.group(1))
            # below stvm__process_entry only the first frame's own code (the trampoline;
            # with ucontext glibc's __start_context, nameless in a stripped libc): the
            # nameless frames are left out
            keep = n >= skip and not (entered and " ?? (" in line)
            entered = entered or (keep and " stvm__process_entry (" in line)
            if keep:
                num = "#%d" % (n - skip)
                out.append(num + " " * max(1, len(m.group(1)) + len(m.group(2)) + 1 - len(num)) + m.group(3))
            continue
        if keep or line.startswith("Backtrace stopped"):
            out.append(line)
    return "\n".join(out)


def _find(vm_list, what):
    out = []
    for vm in vm_list:
        for p in vm.processes():
            pr = Proc(vm, p)
            if what == "all" or (what.isdigit() and pr.id == int(what)) or pr.name == what:
                out.append(pr)
    return out


class StvmBt(gdb.Command):
    """Backtrace of a green process of stvm that is not running.
Usage: stvm-bt ID|NAME|all|host [backtrace options, e.g. -full]
ID is the process's id (info stvm-processes), NAME its name (every process so named),
`all` every process that is not running, `host` the thread that called stvm_run while a
process runs. The stack is unwound from the registers the process's last switch saved,
down to its entry function; the thread's registers and the selected frame are left as
they were. The running process's stack is its thread's: see `bt`."""

    def __init__(self):
        super().__init__("stvm-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        args = arg.split(None, 1)
        if not args:
            raise StvmError("usage: stvm-bt ID|NAME|all|host [backtrace options]")
        what, bt_args = args[0], args[1] if len(args) > 1 else ""
        try:
            gdb.newest_frame()
        except gdb.error:
            raise StvmError("stvm: the program has no stack (not running, and no core file)")
        selected = gdb.selected_frame()
        try:
            vm_list = _vms_or_say()
            if what == "host":
                for vm in vm_list:
                    if not vm.running():
                        print("%s: no host context (stvm_run is not active)" % vm.describe())
                        continue
                    print("%s: the thread in stvm_run" % vm.describe())
                    regs = _saved_regs(vm, vm.v["host_sp"], vm.v["host_uctx"])
                    print(_backtrace_from(regs, bt_args))
                return
            found = _find(vm_list, what)
            if not found:
                raise StvmError("stvm: no process %s (info stvm-processes lists them)" %
                                ("to show" if what == "all" else "'%s'" % what))
            for pr in found:
                waits = pr.waits_on()
                head = "process %d '%s' (priority %d, %s%s)" % (
                    pr.id, pr.name, pr.priority, pr.state(), ": " + waits if waits else "")
                if len(vm_list) > 1:
                    head += " of VM 0x%x" % _u(pr.vm.ptr)
                print(head)
                if pr.is_active():
                    print("  running on its VM's thread: its stack is that thread's (bt)")
                    continue
                regs = _saved_regs(pr.vm, pr.p["ctx_sp"], pr.p["uctx"])
                if _never_ran(regs):
                    print("  has not run yet: its first turn calls %s" % _symbol(pr.p["fn"]))
                    continue
                print(_backtrace_from(regs, bt_args))
        finally:
            try:
                selected.select()
            except (gdb.error, RuntimeError):
                pass


# ---- stvm-vm ------------------------------------------------------------------------

def _ext_pending(vm):
    """(slot, requests not yet answered, semaphore) of the external table (vm/vm.h)."""
    ext = vm.v["ext"]
    out = []
    high, nchunks = int(ext["high"]), int(ext["nchunks"])
    chunks = ext["chunks"]
    for k in range(min(nchunks, (high + EXT_CHUNK_SLOTS - 1) // EXT_CHUNK_SLOTS)):
        c = chunks[k]
        if not int(c):
            continue
        req = _read_words(c["requests"].address, EXT_CHUNK_SLOTS // 2)
        res = _read_words(c["responses"].address, EXT_CHUNK_SLOTS // 2)
        for j in range(EXT_CHUNK_SLOTS):
            a = (req[j // 2] >> (32 * (j % 2))) & 0xFFFFFFFF
            b = (res[j // 2] >> (32 * (j % 2))) & 0xFFFFFFFF
            if a != b:
                out.append((k * EXT_CHUNK_SLOTS + j + 1, (a - b) & 0xFFFFFFFF, c["sems"][j]))
    return out


def _sem_text(vm, sem):
    if not int(sem):
        return "no semaphore"
    name = vm.name_of(sem)
    return "semaphore %s0x%x" % ("'%s' " % name if name is not None else "", _u(sem))


class StvmVm(gdb.Command):
    """The state of each stvm VM in the program.
Usage: stvm-vm
For each VM: its back end, clock and whether it runs; its run queues (the ready processes
per priority, in order); the next deadline of its timer and whether it keeps stvm_run
waiting; the Delay scheduler's timing process and its Delays; the external signals
requested and not yet taken (slot, count, semaphore); the descriptors the aio layer
watches and the sockets still open."""

    def __init__(self):
        super().__init__("stvm-vm", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        for vm in _vms_or_say():
            self.show(vm)

    def show(self, vm):
        v = vm.v
        procs = [Proc(vm, p) for p in vm.processes()]
        by_core = {_u(pr.p): pr for pr in procs}
        print("%s, %d processes (%d the VM's own), %d switches" % (
            vm.describe(), len(procs), sum(1 for p in procs if p.vm_own),
            _u(v["stats"]["context_switches"])))
        utc = datetime.datetime.fromtimestamp((vm.now - US_FROM_1901_TO_1970) / 1e6,
                                              datetime.timezone.utc)
        print("  clock: last read by a scheduling point at %s UTC (%s after the VM's start)" % (
            utc.strftime("%Y-%m-%d %H:%M:%S.%f"), _duration(vm.now - _u(v["clock"]["start_us"]))))
        act = v["active"]
        print("  running: %s" % (by_core[_u(act)].label() if int(act) and _u(act) in by_core
                                 else "the embedding thread (no process)"))
        # run queues
        queues = []
        for prio in range(80, 0, -1):
            q, names, n = v["runq"][prio - 1]["first"], [], 0
            while int(q) and n < 1000:
                pr = by_core.get(_u(q))
                names.append(pr.label() if pr else "0x%x" % _u(q))
                q = q["next_link"]
                n += 1
            if names:
                queues.append("%d: %s" % (prio, ", ".join(names)))
        print("  run queues: %s" % ("; ".join(queues) if queues else "empty"))
        # the timer
        t = v["timer"]
        deadline = _u(t["deadline_us"])
        if deadline:
            rel = "in %s" % _duration(deadline - vm.now) if deadline >= vm.now else \
                "%s ago" % _duration(vm.now - deadline)
            print("  next deadline: %s (VM time %s), signals %s%s" % (
                rel, _duration(deadline - _u(v["clock"]["start_us"])), _sem_text(vm, t["sem"]),
                "; keeps stvm_run waiting" if bool(t["keeps_alive"]) else ""))
        else:
            print("  next deadline: none")
        # the Delay scheduler (image-stubs/kernel/delay.h)
        state = v["delay"]["state"]
        if int(state):
            try:
                ds = state.cast(_type("delay_sched").pointer())
                tp = ds["timing_process"]["core"]
                who = by_core[_u(tp)].label() if int(tp) and _u(tp) in by_core else "finished"
                print("  timing process: %s, %s; %d Delays pending (%d in its heap, %s)" % (
                    who, by_core[_u(tp)].waits_on() or by_core[_u(tp)].state()
                    if _u(tp) in by_core else "", _u(ds["pending"]), _u(ds["count"]),
                    "one active" if bool(ds["has_active"]) else "none active"))
            except StvmError:
                print("  timing process: started (no debug information for delay_sched)")
        else:
            print("  timing process: none (no Delay or timed wait yet)")
        # external signals
        pend = _ext_pending(vm)
        if pend:
            print("  external signals pending: %s" % ", ".join(
                "slot %d: %d for %s" % (slot, n, _sem_text(vm, sem)) for slot, n, sem in pend))
        else:
            print("  external signals pending: none%s" % (
                " (the pending flag is set)" if int(v["ext"]["pending"]) else ""))
        # descriptors
        aio = v["aio"]
        fds = []
        cap = int(aio["cap"]) if int(aio["fds"]) else 0
        if cap:   # the whole table in one read: it is indexed by descriptor
            t = _type("stvm_aio_fd")
            size = t.sizeof
            off = {f: _offset("stvm_aio_fd", f) for f in ("armed", "in_set", "owned")}
            mem = bytes(gdb.selected_inferior().read_memory(aio["fds"], cap * size))
            for fd in range(cap):
                e = mem[fd * size:(fd + 1) * size]
                armed = e[off["armed"]]
                if not armed and not e[off["in_set"]]:
                    continue
                what = "+".join(w for bit, w in ((IO_READ, "read"), (IO_WRITE, "write"))
                                if armed & bit)
                fds.append("%d (%s%s)" % (fd, what or "watched, nothing armed",
                                         ", the VM's own" if e[off["owned"]] else ""))
        print("  descriptors watched (epoll %d%s): %s" % (
            int(aio["epfd"]), ", epoll_wait fallback" if bool(aio["no_pwait2"]) else "",
            ", ".join(fds) if fds else "none"))
        socks = v["sockets"]["state"]
        if int(socks):
            try:
                h, lines = socks.cast(_type("socket_plugin").pointer())["open"], []
                while int(h) and len(lines) < 1000:
                    flags = [w for w, on in (("listening", h["listening"]),
                                             ("connecting", h["connecting"])) if bool(on)]
                    lines.append("fd %d%s" % (int(h["fd"]), " (%s)" % ", ".join(flags)
                                              if flags else ""))
                    h = h["next_open"]
                print("  sockets open: %s" % (", ".join(lines) if lines else "none"))
            except StvmError:
                pass


# ---- stvm-gcore: a core file of a live process that keeps the green stacks ---------

MADV_GUARD_INSTALL, MADV_GUARD_REMOVE = 102, 103   # <linux/mman.h>, Linux 6.13


def _madvise(addr, length, advice):
    return int(gdb.parse_and_eval("(int)madvise((void *)%d, (unsigned long)%d, %d)"
                                  % (addr, length, advice)))


class StvmGcore(gdb.Command):
    """Write a core file of the live program that keeps the green processes' stacks.
Usage: stvm-gcore [FILE]   (FILE as generate-core-file's; default core.PID)
gdb's generate-core-file copies each mapping in pieces of 1 MiB and gives up on the rest
of a mapping at the first piece it cannot read; a stack arena whose guard regions are
MADV_GUARD_INSTALL ones (stvm's default on Linux 6.13 and later) cannot be read there,
so its core lacks every green stack. This command lifts those guard regions (one
madvise call in the program per arena), writes the core, and installs them again (one
call per stack slot ever used), with the other threads held still meanwhile. The kernel's
own core (a crash with `ulimit -c unlimited`) needs none of this."""

    def __init__(self):
        super().__init__("stvm-gcore", gdb.COMMAND_FILES)

    def invoke(self, arg, from_tty):
        if not gdb.selected_inferior().pid or _is_core():
            raise StvmError("stvm-gcore: no live process (a core file is one already)")
        arenas = []
        for vm in vms():
            st = vm.v["stacks"]
            guard = _u(st["guard_size"])
            for i in range(_u(st["narenas"])):
                a = st["arenas"][i]
                if int(a["guard"]) == GUARD_MADVISE and int(a["used"]):
                    arenas.append((_u(a["base"]), int(a["used"]), _u(a["slot_size"]), guard))
        locking = gdb.parameter("scheduler-locking")
        gdb.execute("set scheduler-locking on", to_string=True)
        lifted = []
        try:
            for base, used, slot, guard in arenas:
                if _madvise(base, used * slot, MADV_GUARD_REMOVE) == 0:
                    lifted.append((base, used, slot, guard))
                else:
                    print("stvm-gcore: could not lift the guard regions at 0x%x: its stacks "
                          "will be missing from the core" % base)
            gdb.execute("generate-core-file %s" % arg)
        finally:
            failed = 0
            for base, used, slot, guard in lifted:
                for k in range(used):
                    failed += _madvise(base + k * slot, guard, MADV_GUARD_INSTALL) != 0
            gdb.execute("set scheduler-locking %s" % locking, to_string=True)
            if failed:
                print("stvm-gcore: %d guard regions could not be installed again" % failed)
        print("stvm-gcore: %d stack arena(s) with guard regions written whole" % len(lifted))


InfoProcesses()
StvmBt()
StvmVm()
StvmGcore()
