package main

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// treeSampler samples the resident memory of a process and all its
// descendants from /proc until stopped, keeping the peak of the sum.
type treeSampler struct {
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64 // bytes
	max  int   // most processes seen at once
}

// sampleTree starts sampling root's tree every interval.
func sampleTree(root int, interval time.Duration) *treeSampler {
	s := &treeSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			rss, n := treeRSS(root)
			s.mu.Lock()
			s.peak, s.max = max(s.peak, rss), max(s.max, n)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak RSS in bytes and the most
// processes the tree had at once.
func (s *treeSampler) Stop() (peak int64, procs int) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.max
}

// treeRSS sums VmRSS over root and its descendants.
func treeRSS(root int) (bytes int64, procs int) {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppid(pid); ok {
			parent[pid] = pp
		}
	}
	in := func(pid int) bool {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				return true
			}
		}
		return false
	}
	for pid := range parent {
		if in(pid) {
			bytes += rss(pid)
			procs++
		}
	}
	return bytes, procs
}

// ppid reads a process's parent from /proc/PID/stat; the command name may
// hold spaces and parentheses, so fields count from the last ')'.
func ppid(pid int) (int, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

// rss reads VmRSS from /proc/PID/status, in bytes.
func rss(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}
