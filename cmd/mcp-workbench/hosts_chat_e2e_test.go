//go:build hosts && unix

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A scripted Chat Completions API (streamed chunks, as OpenAI-compatible
// providers answer), for the hosts that speak it: Copilot CLI in its
// bring-your-own-model mode, OpenCode with an openai-compatible provider.
// A host sends a call's result back as a "tool" message.

// chatCall is a script step: the model calls the function fn (a
// workbench tool as the host names it) with args, as call id.
func chatCall(id, fn string, args any) func(w io.Writer) {
	return func(w io.Writer) {
		chatChunk(w, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": id, "type": "function",
			"function": map[string]any{"name": fn, "arguments": mustJSON(args)},
		}}}, nil)
		chatChunk(w, map[string]any{}, "tool_calls")
		chatDone(w)
	}
}

// chatText is a script step: the model's final answer.
func chatText(text string) func(w io.Writer) {
	return func(w io.Writer) {
		chatChunk(w, map[string]any{"role": "assistant", "content": text}, nil)
		chatChunk(w, map[string]any{}, "stop")
		chatDone(w)
	}
}

func chatChunk(w io.Writer, delta map[string]any, finish any) {
	sse(w, "", map[string]any{
		"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

func chatDone(w io.Writer) {
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// chatToolResult returns the content of the "tool" message answering call
// id in a Chat Completions request, or fails.
func chatToolResult(t *testing.T, req map[string]any, id string) string {
	t.Helper()
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] == "tool" && msg["tool_call_id"] == id {
			if s, ok := msg["content"].(string); ok {
				return s
			}
			return mustJSON(msg["content"])
		}
	}
	t.Fatalf("the model request carries no tool message for %s: %s", id, clipLog(mustJSON(msgs)))
	return ""
}

// chatWorkbenchTools returns the names of the workbench's tools (those
// the host names with prefix) a Chat Completions request offered the model.
func chatWorkbenchTools(req map[string]any, prefix string) []string {
	var names []string
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		if name, _ := fn["name"].(string); strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names
}
