package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
)

// minimalLoop is the baseline agent: the least a Go program must do for
// the same scenario — POST the transcript, parse the SSE answer, run the
// tool call with sh -c, append the result, repeat — with no gate, no
// sandbox, no checkpoint, no recording and no plugins.
func minimalLoop(vendor, url string) error {
	tools := json.RawMessage(`[{"name":"shell","description":"Run a shell command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`)
	endpoint := url + "/v1/messages"
	if vendor == vendorOpenAI {
		tools = json.RawMessage(`[{"type":"function","function":{"name":"shell","description":"Run a shell command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]`)
		endpoint = url + "/v1/chat/completions"
	}
	messages := []any{map[string]any{"role": "user", "content": "run the steps"}}
	for range 100 {
		body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 1024, "stream": true, "tools": tools, "messages": messages})
		resp, err := http.Post(endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("model: %s", resp.Status)
		}
		var text, id, name string
		var args strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var ev struct {
				Type    string `json:"type"`
				Choices []struct {
					Delta struct {
						Content   string `json:"content"`
						ToolCalls []struct {
							ID       string `json:"id"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
				} `json:"choices"`
				ContentBlock struct {
					Type, ID, Name string
				} `json:"content_block"`
				Delta struct {
					Text        string `json:"text"`
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			if json.Unmarshal([]byte(data), &ev) != nil {
				continue
			}
			for _, c := range ev.Choices {
				text += c.Delta.Content
				for _, tc := range c.Delta.ToolCalls {
					id, name = cmp(tc.ID, id), cmp(tc.Function.Name, name)
					args.WriteString(tc.Function.Arguments)
				}
			}
			if ev.ContentBlock.Type == "tool_use" {
				id, name = ev.ContentBlock.ID, ev.ContentBlock.Name
			}
			text += ev.Delta.Text
			args.WriteString(ev.Delta.PartialJSON)
		}
		resp.Body.Close()
		if err := sc.Err(); err != nil {
			return err
		}
		if name == "" {
			return nil
		}
		var in struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(args.String()), &in); err != nil {
			return fmt.Errorf("tool arguments: %w", err)
		}
		out, _ := exec.Command("sh", "-c", in.Command).CombinedOutput()
		if vendor == vendorOpenAI {
			messages = append(messages,
				map[string]any{"role": "assistant", "content": text, "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args.String()}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": string(out)})
		} else {
			messages = append(messages,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}, map[string]any{"type": "tool_use", "id": id, "name": name, "input": json.RawMessage(args.String())}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": string(out)}}})
		}
	}
	return fmt.Errorf("no final answer after 100 turns")
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
