// Command sparrow-perf measures `sparrow run` end to end against a fake
// model on loopback, next to two baselines measured in the same run: bare
// exec of the tool's command, and a minimal Go agent loop doing the same
// scenario with no gate, sandbox, checkpoint, recording or plugins.
//
// Each run asks the model K times: requests 1..K-1 are answered with one
// shell tool call `printf 'step-N'`, request K with a final text. The
// fake server checks that request N+1 carries step-N as a tool result, so
// a turn counts only when the tool really ran.
//
//	sparrow-perf -sparrow bin/sparrow -plugins bin/plugins -turns 10,60 -runs 5
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-minimal-loop" {
		if len(os.Args) != 4 {
			fmt.Fprintln(os.Stderr, "usage: sparrow-perf -minimal-loop VENDOR URL")
			os.Exit(2)
		}
		if err := minimalLoop(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "minimal loop:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.sparrow, "sparrow", "bin/sparrow", "the sparrow binary")
	flag.StringVar(&o.plugins, "plugins", "bin/plugins", "the plugin directory (SPARROW_PLUGIN_PATH)")
	turns := flag.String("turns", "10,60", "model requests per run, comma separated (at most 60: MAX_TURNS)")
	flag.IntVar(&o.runs, "runs", 5, "measured runs per case")
	vendors := flag.String("vendors", "openai,anthropic", "wire formats: openai (Chat Completions SSE), anthropic (Messages SSE)")
	flag.StringVar(&o.sandbox, "sandbox", "", "sandbox backend (empty: the default config's)")
	flag.StringVar(&o.extra, "config", "", "HCL appended to the benchmark's config file")
	flag.StringVar(&o.dump, "dump-request", "", "write Sparrow's first model request body to this file")
	flag.BoolVar(&o.noBaseline, "no-baseline", false, "skip the minimal-loop baseline")
	flag.Parse()
	for _, s := range strings.Split(*turns, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 2 || k > 60 {
			fatalf("-turns: %q is not a number from 2 to 60", s)
		}
		o.turns = append(o.turns, k)
	}
	for _, v := range strings.Split(*vendors, ",") {
		if v != vendorOpenAI && v != vendorAnthropic {
			fatalf("-vendors: unknown %q (openai, anthropic)", v)
		}
		o.vendors = append(o.vendors, v)
	}
	var err error
	if o.sparrow, err = filepath.Abs(o.sparrow); err == nil {
		o.plugins, err = filepath.Abs(o.plugins)
	}
	if err != nil {
		fatalf("%v", err)
	}
	if err := run(o, os.Stdout); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sparrow-perf: "+format+"\n", args...)
	os.Exit(1)
}

type options struct {
	sparrow, plugins string
	turns            []int
	runs             int
	vendors          []string
	sandbox          string
	noBaseline       bool
	dump             string
	extra            string
}

// figures are one case's measurements, one entry per run (turn figures
// pool every turn of every run).
type figures struct {
	start, firstTurn, turn, tail, rssMB, cpuMS, procs sample
	turnMedians                                       sample
	bodyFirst, bodyLast                               sample
}

func run(o options, out io.Writer) error {
	fmt.Fprintf(out, "# sparrow-perf %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(out, "%d runs per case after one warm-up; figures are median (min–max) over runs, turn figures pool every turn but the first.\n\n", o.runs)
	bare := measureBare(200)
	fmt.Fprintf(out, "Bare exec on this machine: `sh -c \"printf step-N\"` %.2f ms, `/bin/true` %.2f ms (median of 200).\n\n", bare.shell, bare.trueMS)
	fmt.Fprintln(out, "| Vendor | K | Subject | Start → 1st request ms | Turn ms | Turn p90 ms | 1st turn ms | Exit tail ms | Peak RSS MB (procs) | CPU ms | Request bytes 1st → last |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|")
	type key struct {
		vendor string
		k      int
	}
	results := map[key][2]figures{}
	for _, vendor := range o.vendors {
		for _, k := range o.turns {
			pair, err := measureCase(o, vendor, k, out)
			if err != nil {
				return err
			}
			results[key{vendor, k}] = pair
		}
	}
	if o.noBaseline {
		return nil
	}
	fmt.Fprintln(out, "\nRatios, Sparrow ÷ minimal loop (medians):")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| Vendor | K | Start | Turn | Peak RSS | CPU |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, vendor := range o.vendors {
		for _, k := range o.turns {
			p := results[key{vendor, k}]
			r := func(a, b sample) string { return fmt.Sprintf("%.1f×", a.median()/max(b.median(), 1e-9)) }
			fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s |\n", vendor, k, r(p[0].start, p[1].start), r(p[0].turnMedians, p[1].turnMedians), r(p[0].rssMB, p[1].rssMB), r(p[0].cpuMS, p[1].cpuMS))
		}
	}
	if len(o.turns) > 1 {
		fmt.Fprintln(out, "\nGrowth of Sparrow's peak RSS per turn between the shortest and the longest run:")
		fmt.Fprintln(out)
		lo, hi := o.turns[0], o.turns[len(o.turns)-1]
		for _, vendor := range o.vendors {
			a, b := results[key{vendor, lo}][0].rssMB.median(), results[key{vendor, hi}][0].rssMB.median()
			fmt.Fprintf(out, "- %s: %.0f MB at K=%d, %.0f MB at K=%d: %+.0f KB per turn\n", vendor, a, lo, b, hi, (b-a)*1024/float64(hi-lo))
		}
	}
	return nil
}

// subject is one program run through the scenario.
type subject struct {
	name string
	cmd  func() *exec.Cmd
}

// measureCase runs Sparrow (and the minimal loop, unless -no-baseline)
// through K turns of vendor's wire format and prints a row for each.
func measureCase(o options, vendor string, k int, out io.Writer) (pair [2]figures, err error) {
	m, err := startFakeModel(vendor, k)
	if err != nil {
		return pair, err
	}
	defer m.Close()
	sp, err := newSparrowCase(o, vendor, m.url)
	if err != nil {
		return pair, err
	}
	defer os.RemoveAll(sp.home)
	subjects := []subject{{"sparrow", sp.command}}
	if !o.noBaseline {
		self, _ := os.Executable()
		subjects = append(subjects, subject{"minimal loop", func() *exec.Cmd { return exec.Command(self, "-minimal-loop", vendor, m.url) }})
	}
	// Only Sparrow's first request is worth dumping.
	m.dump = o.dump
	for i, s := range subjects {
		f, err := measure(m, k, o.runs, s.cmd)
		if err != nil {
			return pair, fmt.Errorf("%s %s K=%d: %w", s.name, vendor, k, err)
		}
		m.dump = ""
		pair[i] = f
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %.1f | %s | %s | %s (%s) | %s | %.0f → %.0f |\n",
			vendor, k, s.name, f.start.spread(0), f.turnMedians.spread(1), f.turn.quantile(0.9), f.firstTurn.spread(0),
			f.tail.spread(0), f.rssMB.spread(0), f.procs.spread(0), f.cpuMS.spread(0), f.bodyFirst.median(), f.bodyLast.median())
	}
	return pair, nil
}

// bareFigures are the cost of starting the tool's command with no agent.
type bareFigures struct{ shell, trueMS float64 }

func measureBare(n int) bareFigures {
	var sh, tr sample
	for i := range n {
		t := time.Now()
		_ = exec.Command("sh", "-c", fmt.Sprintf("printf 'step-%d'", i)).Run()
		sh = append(sh, ms(time.Since(t)))
		t = time.Now()
		_ = exec.Command("/bin/true").Run()
		tr = append(tr, ms(time.Since(t)))
	}
	return bareFigures{shell: sh.median(), trueMS: tr.median()}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// measure runs cmd once to warm caches (the WASM compile cache, the page
// cache), then runs times, checking each run made exactly k requests.
// Each measured run is made twice: once unobserved for the times and CPU,
// and once with the process tree sampled for memory. Sampling reads all
// of /proc every 5 ms, which on a small machine takes CPU from the
// processes being timed (on 2 cores it nearly doubled Sparrow's per-turn
// figure and the minimal loop's).
func measure(m *fakeModel, k, runs int, cmd func() *exec.Cmd) (figures, error) {
	var f figures
	if _, err := execute(m, k, cmd, false); err != nil { // warm-up
		return f, err
	}
	for range runs {
		r, err := execute(m, k, cmd, false)
		if err != nil {
			return f, err
		}
		ex := r.exchanges
		f.start = append(f.start, ms(ex[0].arrived.Sub(r.began)))
		var turns sample
		for j := 1; j < len(ex); j++ {
			d := ms(ex[j].arrived.Sub(ex[j-1].done))
			if j == 1 {
				f.firstTurn = append(f.firstTurn, d)
				continue
			}
			turns = append(turns, d)
		}
		f.turn = append(f.turn, turns...)
		f.turnMedians = append(f.turnMedians, turns.median())
		f.tail = append(f.tail, ms(r.exited.Sub(ex[len(ex)-1].done)))
		f.cpuMS = append(f.cpuMS, r.cpuMS)
		f.bodyFirst = append(f.bodyFirst, float64(ex[0].bodyBytes))
		f.bodyLast = append(f.bodyLast, float64(ex[len(ex)-1].bodyBytes))
		if r, err = execute(m, k, cmd, true); err != nil {
			return f, err
		}
		f.rssMB = append(f.rssMB, float64(r.peak)/(1<<20))
		f.procs = append(f.procs, float64(r.procs))
	}
	return f, nil
}

// execution is one run of a subject through the scenario.
type execution struct {
	began, exited time.Time
	exchanges     []exchange
	cpuMS         float64
	// peak and procs are the sampled tree's peak RSS and process count
	// (sampled runs only).
	peak  int64
	procs int
}

// execute runs cmd once against m and checks it made exactly k requests;
// with sampled set the process tree's memory is sampled meanwhile.
func execute(m *fakeModel, k int, cmd func() *exec.Cmd, sampled bool) (execution, error) {
	var r execution
	m.reset()
	c := cmd()
	var stderr bytes.Buffer
	c.Stdout, c.Stderr = io.Discard, &stderr
	r.began = time.Now()
	if err := c.Start(); err != nil {
		return r, err
	}
	var s *treeSampler
	if sampled {
		s = sampleTree(c.Process.Pid, 5*time.Millisecond)
	}
	err := c.Wait()
	r.exited = time.Now()
	if s != nil {
		r.peak, r.procs = s.Stop()
	}
	ex, perr := m.result()
	switch {
	case perr != nil:
		return r, perr
	case err != nil:
		return r, fmt.Errorf("%v\n%s", err, tail(stderr.String(), 2000))
	case len(ex) != k:
		return r, fmt.Errorf("%d model requests, want %d\n%s", len(ex), k, tail(stderr.String(), 2000))
	}
	r.exchanges = ex
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	r.cpuMS = ms(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
	return r, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
