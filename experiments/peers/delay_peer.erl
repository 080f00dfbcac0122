%% The DelayBenchmark workload in Erlang, for the peers experiment (experiments/peers/README.md).
%%
%% usage: erl +S 1:1 -noshell -pa DIR -run delay_peer main N WINDOW_MS TABLE_FILE
%%        erl +S 1:1 -noshell -pa DIR -run delay_peer pingpong HANDOFFS
%%
%% N processes share one index into the 1000 durations of TABLE_FILE (checked against
%% Park-Miller seed 42's first draws and sum); each loops { take the next duration;
%% enter++; receive after it -> ok end; exit++ } while running. The table lives in a
%% persistent_term (read without a copy into each process's heap); the index, the flag
%% and the counts are atomics, the lateness histogram a counters array. The coordinator
%% (priority high, the workers normal) sends every process `go` at the window's start,
%% sleeps the window, clears running, sleeps as long again (the drain), prints one line
%% of key=value figures and halts.
%% CPU is statistics(runtime) (every scheduler thread, ms resolution) over the window.
%%
%% pingpong: stvm-bench micro's semaphore ping-pong as Erlang has it, two processes
%% each sending the other a message and waiting for the answer in receive; prints the
%% hand-offs (messages), their wall and CPU time in ns.
-module(delay_peer).
-export([main/1, pingpong/1]).

-define(TABLE_SIZE, 1000).
%% Lateness buckets, the same in every peer: exact us below 1000, then ms up to 1 s,
%% then one bucket for a second or more.
-define(NBUCKETS, 2001).
%% atomics slots
-define(INDEX, 1).
-define(RUNNING, 2).
-define(ENTER, 3).
-define(EXIT, 4).
-define(EARLY, 5).
-define(MAX, 6).

main([NS, WS, Path]) ->
    %% Above the workers, as DelayBenchmark's coordinator (42) is above its workers
    %% (41): its window ends on time however long the workers' run queue is.
    process_flag(priority, high),
    N = list_to_integer(NS),
    Window = list_to_integer(WS),
    Table = read_table(Path),
    persistent_term:put(delay_peer_table, Table),
    A = atomics:new(6, [{signed, true}]),
    H = counters:new(?NBUCKETS, []),
    Workers = [spawn(fun() -> receive go -> ok end,
                              worker(A, H, erlang:monotonic_time(microsecond)) end)
               || _ <- lists:seq(1, N)],
    atomics:put(A, ?RUNNING, 1),
    {_, _} = statistics(runtime),
    {Cpu0, _} = statistics(runtime),
    Wall0 = erlang:monotonic_time(microsecond),
    [W ! go || W <- Workers],
    receive after Window -> ok end,
    atomics:put(A, ?RUNNING, 0),
    {Cpu1, _} = statistics(runtime),
    Wall1 = erlang:monotonic_time(microsecond),
    EnterW = atomics:get(A, ?ENTER),
    ExitW = atomics:get(A, ?EXIT),
    receive after Window -> ok end,
    Samples = lists:sum([counters:get(H, B) || B <- lists:seq(1, ?NBUCKETS)]),
    Max = atomics:get(A, ?MAX),
    io:format("peer=erlang enter=~b exit_in_window=~b exit=~b wall_ms=~.3f cpu_ms=~.3f "
              "late_p50_us=~b late_p99_us=~b late_max_us=~b early=~b samples=~b~n",
              [EnterW, ExitW, atomics:get(A, ?EXIT), (Wall1 - Wall0) / 1000,
               float(Cpu1 - Cpu0), quantile(H, Samples, Max, 0.50),
               quantile(H, Samples, Max, 0.99), Max, atomics:get(A, ?EARLY), Samples]),
    halt(0).

pingpong([HS]) ->
    Rounds = list_to_integer(HS) div 2,
    Self = self(),
    Pong = spawn(fun() -> pong(Self) end),
    {_, _} = statistics(runtime),
    {Cpu0, _} = statistics(runtime),
    Wall0 = erlang:monotonic_time(nanosecond),
    ping(Pong, Rounds),
    Wall1 = erlang:monotonic_time(nanosecond),
    {Cpu1, _} = statistics(runtime),
    Pong ! stop,
    io:format("peer=erlang handoffs=~b wall_ns=~b cpu_ns=~b~n",
              [Rounds * 2, Wall1 - Wall0, (Cpu1 - Cpu0) * 1000000]),
    halt(0).

ping(_, 0) -> ok;
ping(Pong, I) ->
    Pong ! ping,
    receive pong -> ping(Pong, I - 1) end.

pong(Ping) ->
    receive
        ping -> Ping ! pong, pong(Ping);
        stop -> ok
    end.

worker(A, H, Before) ->
    case atomics:get(A, ?RUNNING) of
        0 -> ok;
        _ ->
            I = (atomics:add_get(A, ?INDEX, 1) - 1) rem ?TABLE_SIZE,
            D = element(I + 1, persistent_term:get(delay_peer_table)),
            atomics:add(A, ?ENTER, 1),
            receive after D -> ok end,
            After = erlang:monotonic_time(microsecond),
            Late0 = After - Before - D * 1000,
            Late = if Late0 < 0 -> atomics:add(A, ?EARLY, 1), 0;
                      true -> Late0
                   end,
            counters:add(H, bucket(Late) + 1, 1),
            raise_max(A, Late),
            atomics:add(A, ?EXIT, 1),
            worker(A, H, After)
    end.

raise_max(A, Late) ->
    Old = atomics:get(A, ?MAX),
    if Late > Old ->
            case atomics:compare_exchange(A, ?MAX, Old, Late) of
                ok -> ok;
                _ -> raise_max(A, Late)
            end;
       true -> ok
    end.

bucket(L) when L < 1000 -> L;
bucket(L) when L < 1000000 -> 1000 + L div 1000;
bucket(_) -> 2000.

%% The upper edge of the bucket holding quantile Q, never above the maximum.
quantile(_, 0, _, _) -> 0;
quantile(H, Count, Max, Q) ->
    Need = max(1, ceil(Q * Count)),
    quantile(H, Need, Max, 0, 0).
quantile(H, Need, Max, B, Seen) when B < ?NBUCKETS ->
    S = Seen + counters:get(H, B + 1),
    if S >= Need ->
            Edge = if B < 1000 -> B;
                      B < 2000 -> (B - 999) * 1000 - 1;
                      true -> Max
                   end,
            min(Edge, Max);
       true -> quantile(H, Need, Max, B + 1, S)
    end;
quantile(_, _, _, _, _) -> 0.

read_table(Path) ->
    {ok, Bin} = file:read_file(Path),
    L = [binary_to_integer(X) || X <- binary:split(Bin, <<"\n">>, [global, trim_all])],
    Sum = lists:sum(L),
    case {length(L), lists:sublist(L, 7), Sum} of
        {?TABLE_SIZE, [1, 27, 37, 14, 19, 10, 49], 24686} -> list_to_tuple(L);
        _ -> io:format(standard_error, "delay_peer: ~s is not Park-Miller seed 42's table~n",
                       [Path]),
             halt(1)
    end.
