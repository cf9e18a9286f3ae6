package main

import (
	"bytes"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sparrow-cli/sparrow/sdk/event"
)

// checkEvents is the testscript command `events FILE TYPE...`: FILE must be
// an NDJSON event stream and nothing else, seq 1..n without gaps, starting
// with RunStarted, ending with RunFinished, and containing each TYPE.
func checkEvents(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: events FILE [TYPE...]")
	}
	data := ts.ReadFile(args[0])
	events, err := event.Decode(bytes.NewReader([]byte(data)))
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if n := strings.Count(data, "\n"); n != len(events) {
		ts.Fatalf("%s: %d lines but %d events", args[0], n, len(events))
	}
	if len(events) < 2 || events[0].Type != event.TypeRunStarted || events[len(events)-1].Type != event.TypeRunFinished {
		ts.Fatalf("%s: must start with RunStarted and end with RunFinished", args[0])
	}
	seen := map[string]bool{}
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			ts.Fatalf("%s: event %d has seq %d", args[0], i+1, e.Seq)
		}
		seen[string(e.Type)] = true
	}
	for _, want := range args[1:] {
		if seen[want] == neg {
			ts.Fatalf("%s: has %s = %v", args[0], want, seen[want])
		}
	}
}
