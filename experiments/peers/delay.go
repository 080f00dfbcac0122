// The DelayBenchmark workload in Go, for the peers experiment (experiments/peers/README.md).
//
// usage: delay-go N WINDOW_MS TABLE_FILE   (run with GOMAXPROCS=1, pinned by the caller)
//        delay-go pingpong HANDOFFS
//
// N goroutines share one index into the 1000 durations of TABLE_FILE (one per line,
// written by experiments/peers/run.py and checked here against Park-Miller seed 42's
// first draws and sum); each loops { take the next duration; enter++; time.Sleep(it); exit++ } while
// running. The coordinator releases them all at the window's start, sleeps the window,
// clears running, sleeps as long again (the drain) and prints one line of key=value
// figures. CPU time is getrusage(RUSAGE_SELF) over the window: every thread of the
// runtime (sysmon, the garbage collector) is counted, as stvm's process CPU time is.
//
// pingpong: the semaphore ping-pong of stvm-bench micro's handoff case, two goroutines
// and two semaphores (channels of one slot: a send that does not block is a signal, a
// receive a wait); both run one loop { wait on mine; signal the other's }, ping
// signalling pong's first, so each hand-off switches goroutine and both block at the
// same call site, as in stvm's case. Prints the hand-offs, their wall and CPU time in ns.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const tableSize = 1000

// Lateness buckets, the same in every peer: exact µs below 1000, then ms up to 1 s,
// then one bucket for a second or more.
const nbuckets = 2001

func bucket(late int64) int {
	switch {
	case late < 1000:
		return int(late)
	case late < 1000000:
		return 1000 + int(late/1000)
	}
	return 2000
}

// The upper edge of the bucket holding quantile q, never above the maximum.
func quantile(h []int64, count int64, max int64, q float64) int64 {
	need := int64(q*float64(count) + 0.999999)
	if need < 1 {
		need = 1
	}
	var seen int64
	for b, c := range h {
		seen += c
		if seen >= need {
			edge := int64(b)
			if b >= 1000 && b < 2000 {
				edge = int64(b-1000+1)*1000 - 1
			} else if b == 2000 {
				edge = max
			}
			if edge > max {
				edge = max
			}
			return edge
		}
	}
	return 0
}

func readTable(path string) []int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "delay-go:", err)
		os.Exit(1)
	}
	defer f.Close()
	var t []int
	sum := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		v, err := strconv.Atoi(s.Text())
		if err != nil || v < 1 || v > 50 {
			fmt.Fprintln(os.Stderr, "delay-go: bad duration in", path)
			os.Exit(1)
		}
		t = append(t, v)
		sum += v
	}
	first := []int{1, 27, 37, 14, 19, 10, 49}
	ok := len(t) == tableSize && sum == 24686
	for i := 0; ok && i < len(first); i++ {
		ok = t[i] == first[i]
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "delay-go: the table is not Park-Miller seed 42's")
		os.Exit(1)
	}
	return t
}

func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// One party of the ping-pong: rounds times, wait on mine and signal other, except
// ping's last signal, which nobody would take.
func party(rounds int64, mine, other chan struct{}, isPing bool) {
	for i := int64(0); i < rounds; i++ {
		<-mine
		if !isPing || i+1 < rounds {
			other <- struct{}{}
		}
	}
}

func pingpong(handoffs int64) {
	s0, s1 := make(chan struct{}, 1), make(chan struct{}, 1)
	rounds := handoffs / 2
	done := make(chan struct{})
	go func() {
		party(rounds, s0, s1, false)
		close(done)
	}()
	wall0, cpu0 := time.Now(), cpuNs()
	s0 <- struct{}{}
	party(rounds, s1, s0, true)
	cpu1, wall1 := cpuNs(), time.Now()
	<-done
	fmt.Printf("peer=go handoffs=%d wall_ns=%d cpu_ns=%d\n", rounds*2,
		wall1.Sub(wall0).Nanoseconds(), cpu1-cpu0)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "pingpong" {
		n, _ := strconv.ParseInt(os.Args[2], 10, 64)
		pingpong(n)
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: delay-go N WINDOW_MS TABLE_FILE")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Args[1])
	windowMs, _ := strconv.Atoi(os.Args[2])
	table := readTable(os.Args[3])

	var index, running int32
	var enter, exit, early int64
	// One goroutine runs at a time (GOMAXPROCS=1) but may be preempted anywhere, so the
	// shared state is atomic; the histogram is guarded by a mutex for the same reason.
	var mu sync.Mutex
	hist := make([]int64, nbuckets)
	var samples, lateMax int64
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			<-start
			before := time.Now()
			for atomic.LoadInt32(&running) != 0 {
				i := (atomic.AddInt32(&index, 1) - 1) % tableSize
				d := table[i]
				atomic.AddInt64(&enter, 1)
				time.Sleep(time.Duration(d) * time.Millisecond)
				after := time.Now()
				late := after.Sub(before).Microseconds() - int64(d)*1000
				if late < 0 {
					atomic.AddInt64(&early, 1)
					late = 0
				}
				mu.Lock()
				hist[bucket(late)]++
				samples++
				if late > lateMax {
					lateMax = late
				}
				mu.Unlock()
				atomic.AddInt64(&exit, 1)
				before = after
			}
		}()
	}
	atomic.StoreInt32(&running, 1)
	wall0, cpu0 := time.Now(), cpuNs()
	close(start)
	time.Sleep(time.Duration(windowMs) * time.Millisecond)
	atomic.StoreInt32(&running, 0)
	cpu1, wall1 := cpuNs(), time.Now()
	enterWindow, exitWindow := atomic.LoadInt64(&enter), atomic.LoadInt64(&exit)
	// The drain: the workers still sleeping end their delay and stop; those left are
	// abandoned with the process, as stvm's coordinator terminates its own. Lateness
	// counts every delay that ended, the drain's too, as stvm-bench delay's does.
	time.Sleep(time.Duration(windowMs) * time.Millisecond)
	mu.Lock()
	p50 := quantile(hist, samples, lateMax, 0.50)
	p99 := quantile(hist, samples, lateMax, 0.99)
	mu.Unlock()
	fmt.Printf("peer=go enter=%d exit_in_window=%d exit=%d wall_ms=%.3f cpu_ms=%.3f "+
		"late_p50_us=%d late_p99_us=%d late_max_us=%d early=%d samples=%d\n",
		enterWindow, exitWindow, atomic.LoadInt64(&exit),
		float64(wall1.Sub(wall0).Nanoseconds())/1e6, float64(cpu1-cpu0)/1e6,
		p50, p99, lateMax, atomic.LoadInt64(&early), samples)
}
