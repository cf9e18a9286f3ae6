package bus_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparrow-cli/sparrow/kernel/bus"
	"github.com/sparrow-cli/sparrow/kernel/redact"
	"github.com/sparrow-cli/sparrow/sdk/event"
)

const (
	configSecret = "cfg-sensitive-value-42"
	envSecret    = "env-token-value-0042"
)

// patternSecret is caught by shape, not by value.
var patternSecret = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

// plant sets every string in the payload that v points to — fields, slice
// elements, nested structs — and every json.RawMessage to text holding all
// three secrets.
func plant(v reflect.Value) {
	text := "see " + configSecret + " and " + envSecret + " and " + patternSecret
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		raw, _ := json.Marshal(map[string]any{"cmd": text, "nested": map[string]any{"args": []string{text}}})
		v.SetBytes(raw)
	case v.Kind() == reflect.String:
		v.SetString(text)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				plant(v.Field(i))
			}
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		v.Set(reflect.ValueOf([]string{text, text}).Convert(v.Type()))
	}
}

func TestSecretsNeverReachSubscribers(t *testing.T) {
	r := redact.New([]string{configSecret}, map[string]string{"MY_API_TOKEN": envSecret, "HOME": "/home/u"})
	b := bus.New("r", r, nil)
	var mu sync.Mutex
	var seen []string
	check := func(e event.Event) {
		line, err := json.Marshal(e)
		if err != nil {
			t.Errorf("marshal %s: %v", e.Type, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(line))
	}
	b.SubscribeSync("recorder", func(e event.Event) error { check(e); return nil })
	b.Subscribe("terminal", -1, check)
	b.Subscribe("surface", 0, check)

	originals := map[event.Type]event.Payload{}
	for _, typ := range event.Types() {
		p := event.New(typ)
		plant(reflect.ValueOf(p).Elem())
		keep := event.New(typ)
		plant(reflect.ValueOf(keep).Elem())
		originals[typ] = keep
		e, err := b.Publish("main", p)
		if err != nil {
			t.Fatalf("publish %s: %v", typ, err)
		}
		if diff := cmp.Diff(keep, p); diff != "" {
			t.Errorf("Publish changed the producer's %s payload (-want +got):\n%s", typ, diff)
		}
		if e.Payload == p {
			t.Errorf("%s: subscribers share the producer's payload", typ)
		}
	}
	b.Close()
	if want := 3*len(event.Types()) - int(b.Dropped("surface")); len(seen) != want {
		t.Fatalf("subscribers saw %d events, want %d", len(seen), want)
	}
	for _, line := range seen {
		for _, s := range []string{configSecret, envSecret, patternSecret} {
			if strings.Contains(line, s) {
				t.Errorf("a subscriber saw secret %q in %s", s, line)
			}
		}
	}
	// Every planted string field still arrives, redacted.
	for _, line := range seen {
		if strings.Contains(line, `"see `) && !strings.Contains(line, "[REDACTED]") {
			t.Errorf("no redaction marker in %s", line)
		}
	}
}

func TestRedactionOfNamedPayloads(t *testing.T) {
	r := redact.New([]string{configSecret}, nil)
	b := bus.New("r", r, nil)
	var got []event.Event
	b.SubscribeSync("c", func(e event.Event) error { got = append(got, e); return nil })
	args := json.RawMessage(`{"command":"curl -u admin:` + configSecret + ` https://x","env":{"API_TOKEN":"plainvalue"}}`)
	payloads := []event.Payload{
		&event.Message{Role: "assistant", Text: "the key is " + configSecret},
		&event.ToolOutput{CallID: "c1", Text: "export GITHUB_TOKEN=" + patternSecret + "\n", Final: true},
		&event.Error{Message: "auth failed for " + configSecret, Source: "provider"},
		&event.ToolUseProposed{CallID: "c1", Tool: "shell", Arguments: args, Risk: "exec"},
	}
	for _, p := range payloads {
		if _, err := b.Publish("main", p); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	want := []event.Payload{
		&event.Message{Role: "assistant", Text: "the key is [REDACTED]"},
		&event.ToolOutput{CallID: "c1", Text: "export GITHUB_TOKEN=[REDACTED:github_token]\n", Final: true},
		&event.Error{Message: "auth failed for [REDACTED]", Source: "provider"},
		&event.ToolUseProposed{CallID: "c1", Tool: "shell", Risk: "exec",
			Arguments: json.RawMessage(`{"command":"curl -u admin:[REDACTED] https://x","env":{"API_TOKEN":"[REDACTED:credential]"}}`)},
	}
	var gotPayloads []event.Payload
	for _, e := range got {
		gotPayloads = append(gotPayloads, e.Payload)
	}
	if diff := cmp.Diff(want, gotPayloads); diff != "" {
		t.Errorf("redacted payloads (-want +got):\n%s", diff)
	}
}
