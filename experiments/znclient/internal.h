/*
 * The one place an experiment reaches below <stvm.h> (scripts/check-layering.sh names
 * this file as the one exception: every other file of bench/, lab/, examples/ and
 * experiments/ includes <stvm.h> and its own folder's headers only).
 *
 * The ZnClient experiment needs, and the public API does not offer:
 *
 *  - the experiment's subject, the image side's ZnClient model
 *    (image-stubs/zinc/zn_client.h): zn_client, zn_client_config, zn_client_world,
 *    zn_point, zn_client_stats, zn_response and stvm__zn_client_new, _get, _why,
 *    _stats, _fd, _free. It is a model of Pharo's Zinc written for this experiment and
 *    kept in the library so that the library's own tests (tests/test_zn_client.c) cover
 *    it; it is not an embedder's API.
 *  - its log (image-stubs/zinc/zn_log.h, included by zn_client.h): zn_log,
 *    zn_log_stats and stvm__zn_log_new, _free, _set_construction_cost_us, _announcer,
 *    _get_stats, and the ZnLogEvent classes a subscriber subscribes to
 *    (stvm__zn_log_event_class, stvm__zn_request_written_class,
 *    stvm__zn_response_read_class, stvm__zn_client_transaction_class); and
 *    stvm__announcer_subscribe (image-stubs/announcements/announcer.h, also included by
 *    zn_client.h), the subscriber whose work the experiment varies.
 *  - the modelled world's server (zn_sim.c): stvm__socket_adopt
 *    (image-stubs/network/socket.h) makes one end of a socketpair a connected Socket.
 *    The public API opens a socket only by connecting or listening; a socketpair keeps
 *    the server outside the VM, answering when the simulated clock says, with no port
 *    and no wall clock.
 *  - stvm__sim_set_wake_cost (vm/sim_world.h): what each wake-up from a simulated OS
 *    sleep costs, drawn per sleep from the model or taken from a recording. The public
 *    stvm_config has one fixed cost for every wake-up (wake_inject_us).
 *
 * The program links the static library (build/libstvm.a), where these are defined.
 */
#ifndef STVM_EXPERIMENTS_ZNCLIENT_INTERNAL_H
#define STVM_EXPERIMENTS_ZNCLIENT_INTERNAL_H

#include "../../image-stubs/network/socket.h"
#include "../../image-stubs/zinc/zn_client.h"
#include "../../vm/sim_world.h"

#endif
