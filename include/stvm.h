/*
 * stvm.h -- the public contract of stvm, a Smalltalk-style green-thread VM core.
 *
 * One include for everything, as Lua's lua.h, lauxlib.h and lualib.h are three headers
 * for three audiences: this header only includes one header per audience, in this
 * order, each with its own functions and what it needs of core.h:
 *
 *   stvm/core.h   the core runtime: version and errors, the configuration, the VM,
 *                 processes and their synchronisation, external signals, the run loop,
 *                 time and Delays, counters (and the one benchmark-only hook);
 *   stvm/net.h    descriptors, TCP sockets and socket streams;
 *   stvm/trace.h  tracing and its writers;
 *   stvm/prim.h   primitives and object memory: integers, oops, ByteArrays, the
 *                 primitive table;
 *   stvm/ffi.h    foreign functions (libffi): callouts and callbacks;
 *
 * then stvm/deprecated.h, which keeps, for one release, the old names of the calls the
 * noun_verb sweep renamed. A program may include <stvm.h> or only the sub-headers it
 * needs (<stvm/net.h>, say). Every entry point takes the VM it acts on; there is no
 * global state, so several VMs may live in one program (one OS thread per VM).
 * Declarations only; C standard headers only.
 */
#ifndef STVM_H
#define STVM_H

#include "stvm/core.h"
#include "stvm/net.h"
#include "stvm/trace.h"
#include "stvm/prim.h"
#include "stvm/ffi.h"

/* The names before the noun_verb sweep, for one release (hidden by STVM_NO_DEPRECATED). */
#include "stvm/deprecated.h"

#endif /* STVM_H */
