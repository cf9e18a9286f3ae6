package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The minimal loop completes the scenario against both wire formats, and
// the fake model counts every request and its body.
func TestScenarioCompletes(t *testing.T) {
	for _, vendor := range []string{vendorOpenAI, vendorAnthropic} {
		t.Run(vendor, func(t *testing.T) {
			m, err := startFakeModel(vendor, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := minimalLoop(vendor, m.url); err != nil {
				t.Fatal(err)
			}
			ex, err := m.result()
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != 4 {
				t.Fatalf("%d requests, want 4", len(ex))
			}
			for i, e := range ex {
				if e.bodyBytes == 0 || e.done.Before(e.arrived) {
					t.Fatalf("request %d: %+v", i+1, e)
				}
			}
			if ex[3].bodyBytes <= ex[0].bodyBytes {
				t.Fatalf("the transcript did not grow: %d → %d bytes", ex[0].bodyBytes, ex[3].bodyBytes)
			}
		})
	}
}

// A request that does not carry the previous step's output is refused:
// a turn counts only when the tool really ran.
func TestScenarioRejectsAMissingToolResult(t *testing.T) {
	cases := map[string]string{
		vendorOpenAI:    `{"messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"call_1","content":"step-7"}]}`,
		vendorAnthropic: `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"nothing"}]}]}`,
	}
	for vendor, second := range cases {
		t.Run(vendor, func(t *testing.T) {
			m, err := startFakeModel(vendor, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			path := "/v1/messages"
			if vendor == vendorOpenAI {
				path = "/v1/chat/completions"
			}
			for i, body := range []string{`{"messages":[{"role":"user","content":"go"}]}`, second} {
				resp, err := http.Post(m.url+path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if want := []int{200, 400}[i]; resp.StatusCode != want {
					t.Fatalf("request %d: status %d, want %d", i+1, resp.StatusCode, want)
				}
			}
			if _, err := m.result(); err == nil || !strings.Contains(err.Error(), "step-1") {
				t.Fatalf("error %v, want one naming step-1", err)
			}
		})
	}
}

func TestSampleSpread(t *testing.T) {
	s := sample{5, 1, 3, 2, 4}
	if got := s.spread(0); got != "3 (1–5)" {
		t.Fatalf("spread %q", got)
	}
	if got := fmt.Sprint(s.quantile(0.9)); got != "5" {
		t.Fatalf("p90 %s", got)
	}
	if got := (sample{1, 2}).median(); got != 1.5 {
		t.Fatalf("median %v", got)
	}
}
