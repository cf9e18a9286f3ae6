package openai

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/sparrow-cli/sparrow/sdk/provider"
)

// responsesRequest is the body of POST /responses.
type responsesRequest struct {
	Model           string           `json:"model"`
	Instructions    string           `json:"instructions,omitempty"`
	Input           []inputItem      `json:"input"`
	Tools           []responsesTool  `json:"tools,omitempty"`
	Stream          bool             `json:"stream"`
	Store           bool             `json:"store"`
	MaxOutputTokens int64            `json:"max_output_tokens,omitempty"`
	Temperature     *float64         `json:"temperature,omitempty"`
	Reasoning       *reasoningConfig `json:"reasoning,omitempty"`
}

type reasoningConfig struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// inputItem is a message, function_call or function_call_output item.
type inputItem struct {
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"`
	Content   string  `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments string  `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

// responsesTool is a function tool. Strict is sent as false: the API
// defaults it to true, which rejects most hand-written schemas.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// responsesBody maps a request to the Responses API. Nothing is stored
// server-side (store: false), so reasoning items, which could only be
// sent back by reference or encrypted, are dropped.
func responsesBody(req provider.Request, _ *settings) ([]byte, error) {
	body := responsesRequest{Model: req.Model, Instructions: req.System, Stream: true,
		MaxOutputTokens: req.MaxOutputTokens, Temperature: req.Temperature, Input: []inputItem{}}
	for _, m := range req.Messages {
		body.Input = append(body.Input, inputItems(m)...)
	}
	params, err := toolParams(req.Tools)
	if err != nil {
		return nil, err
	}
	for i, t := range req.Tools {
		body.Tools = append(body.Tools, responsesTool{Type: "function", Name: t.Name,
			Description: t.Description, Parameters: params[i]})
	}
	if req.ThinkingBudget > 0 && isReasoningModel(req.Model) {
		body.Reasoning = &reasoningConfig{Effort: effort(req.ThinkingBudget), Summary: "auto"}
	}
	return json.Marshal(body)
}

// inputItems maps one message to input items, in the order of its parts
// (consecutive text parts become one message item).
func inputItems(m provider.Message) []inputItem {
	var (
		out   []inputItem
		texts []string
	)
	flush := func() {
		if len(texts) > 0 {
			out = append(out, inputItem{Type: "message", Role: string(m.Role), Content: strings.Join(texts, "\n")})
			texts = nil
		}
	}
	for _, p := range m.Parts {
		switch {
		case p.ToolResult != nil:
			flush()
			o := p.ToolResult.Content
			if p.ToolResult.IsError {
				o = toolErrorPrefix + o
			}
			out = append(out, inputItem{Type: "function_call_output", CallID: p.ToolResult.CallID, Output: &o})
		case p.ToolCall != nil:
			flush()
			out = append(out, inputItem{Type: "function_call", CallID: p.ToolCall.ID, Name: p.ToolCall.Name,
				Arguments: argsOrEmpty(p.ToolCall.ArgumentsJSON)})
		case p.Thinking != nil:
			// dropped, see responsesBody
		case p.Text != "":
			texts = append(texts, p.Text)
		}
	}
	flush()
	return out
}

// responsesEvent is one streamed event of the Responses API; which fields
// are set depends on Type.
type responsesEvent struct {
	Type        string `json:"type"`
	Delta       string `json:"delta"`
	OutputIndex int    `json:"output_index"`
	Arguments   string `json:"arguments"`
	Item        *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	Response *struct {
		Status            string    `json:"status"`
		Error             *apiError `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			InputTokensDetails *struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
	// The error event carries these at the top level (or in Error).
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *apiError       `json:"error"`
}

// responsesState follows one streamed response.
type responsesState struct {
	send    func(provider.Event) error
	calls   map[int]*fnCall // by output_index
	n       int
	refused bool
}

type fnCall struct {
	index   int
	gotArgs bool
}

// errDone ends parsing after the response's terminal event.
var errDone = errors.New("done")

// parseResponses reads a Responses API stream up to its terminal event
// (response.completed, response.incomplete or response.failed).
func parseResponses(r *sseReader, send func(provider.Event) error) error {
	st := &responsesState{send: send, calls: map[int]*fnCall{}}
	for {
		ev, err := next(r)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, errStreamCut):
			return streamEndedEarly("no response.completed event")
		case err != nil:
			return err
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			continue
		}
		var e responsesEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return malformed(ev, err)
		}
		if e.Type == "" {
			e.Type = ev.Event
		}
		if err := st.handle(&e); errors.Is(err, errDone) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// handle acts on one event; errDone after the terminal one.
func (st *responsesState) handle(e *responsesEvent) error {
	switch e.Type {
	case "response.output_text.delta":
		return st.text(e.Delta)
	case "response.refusal.delta":
		st.refused = true
		return st.text(e.Delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if e.Delta == "" {
			return nil
		}
		return st.send(provider.Event{Thinking: &provider.Thinking{Text: e.Delta}})
	case "response.output_item.added", "response.output_item.done":
		if e.Item == nil || e.Item.Type != "function_call" {
			return nil
		}
		return st.item(e.OutputIndex, e.Item.CallID, e.Item.Name, e.Item.Arguments)
	case "response.function_call_arguments.delta":
		return st.args(e.OutputIndex, e.Delta)
	case "response.function_call_arguments.done":
		if c := st.calls[e.OutputIndex]; c != nil && !c.gotArgs {
			return st.args(e.OutputIndex, e.Arguments)
		}
		return nil
	case "response.completed", "response.incomplete":
		return st.end(e)
	case "response.failed":
		ae := apiError{Message: "the response failed"}
		if e.Response != nil && e.Response.Error != nil {
			ae = *e.Response.Error
		}
		return classifyStreamError(ae)
	case "error":
		ae := apiError{Message: e.Message, Code: e.Code}
		if e.Error != nil {
			ae = *e.Error
		}
		return classifyStreamError(ae)
	}
	return nil
}

func (st *responsesState) text(t string) error {
	if t == "" {
		return nil
	}
	return st.send(provider.Event{Text: t})
}

// item announces a function call (output_item.added), or on
// output_item.done completes one whose arguments were never streamed.
func (st *responsesState) item(at int, callID, name, args string) error {
	c := st.calls[at]
	if c == nil {
		c = &fnCall{index: st.n}
		st.calls[at] = c
		st.n++
		c.gotArgs = args != ""
		return st.send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: c.index, ID: callID, Name: name, ArgumentsDelta: args}})
	}
	if !c.gotArgs && args != "" {
		return st.args(at, args)
	}
	return nil
}

// args streams a fragment of a function call's arguments.
func (st *responsesState) args(at int, delta string) error {
	c := st.calls[at]
	if c == nil { // arguments before the item: number it anyway
		c = &fnCall{index: st.n}
		st.calls[at] = c
		st.n++
	}
	if delta == "" {
		return nil
	}
	c.gotArgs = true
	return st.send(provider.Event{ToolCall: &provider.ToolCallDelta{Index: c.index, ArgumentsDelta: delta}})
}

// end sends Usage and Stop for response.completed or .incomplete.
func (st *responsesState) end(e *responsesEvent) error {
	var u provider.Usage
	stop := provider.StopEndTurn
	if st.n > 0 {
		stop = provider.StopToolUse
	}
	if r := e.Response; r != nil {
		if r.Usage != nil {
			var cached int64
			if r.Usage.InputTokensDetails != nil {
				cached = r.Usage.InputTokensDetails.CachedTokens
			}
			u = provider.Usage{InputTokens: max(r.Usage.InputTokens-cached, 0), OutputTokens: r.Usage.OutputTokens,
				CacheReadTokens: cached}
		}
		if r.IncompleteDetails != nil {
			switch r.IncompleteDetails.Reason {
			case "max_output_tokens":
				stop = provider.StopMaxTokens
			case "content_filter":
				stop = provider.StopRefusal
			}
		}
	}
	if st.refused {
		stop = provider.StopRefusal
	}
	if err := st.send(provider.Event{Usage: &u}); err != nil {
		return err
	}
	if err := st.send(provider.Event{Stop: stop}); err != nil {
		return err
	}
	return errDone
}
