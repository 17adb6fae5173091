package search

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"read_file", []string{"read", "file"}},
		{"browser-navigate", []string{"browser", "navigate"}},
		{"getTinyImage", []string{"get", "tiny", "image", "gettinyimage"}},
		{"GetTinyImage", []string{"get", "tiny", "image", "gettinyimage"}},
		{"GitHub", []string{"git", "hub", "github"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"parseJSONBody", []string{"parse", "json", "body", "parsejsonbody"}},
		{"fs.read.file", []string{"fs", "read", "file"}},
		{"base64Encode", []string{"base", "64", "encode", "base64encode"}},
		{"v2", []string{"v", "2", "v2"}},
		{"list_files_v2", []string{"list", "files", "v", "2", "v2"}},
		{"mcp__github__create_issue", []string{"mcp", "github", "create", "issue"}},
		{"  ", nil},
		{"ÉcrireFichier", []string{"écrire", "fichier", "écrirefichier"}},
		{"获取文件", []string{"获取文件"}},
		{"naïve café", []string{"naïve", "café"}},
		{"k8s a11y i18n e2e", []string{"k8s", "a11y", "i18n", "e2e"}},
		{"ec2 s3", []string{"ec", "2", "ec2", "s", "3", "s3"}},
		{"close the pop-up", []string{"close", "the", "pop", "up", "popup"}},
		{"re-run a sub-issue", []string{"re", "run", "rerun", "a", "sub", "issue", "subissue"}},
		{"read-only key-value", []string{"read", "only", "key", "value"}},
		{"ALLCAPS", []string{"allcaps"}},
		{"path/to/some_file.txt", []string{"path", "to", "some", "file", "txt"}},
	} {
		if got := splitWords(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTerms(t *testing.T) {
	got, n := terms("Please delete the files in my folders")
	words := got[:n]
	if want := []string{"delet", "file", "folder"}; !reflect.DeepEqual(words, want) {
		t.Errorf("words = %q, want %q", words, want)
	}
	for _, c := range []string{"~delete", "~file", "~directory"} {
		if !slices.Contains(got[n:], c) {
			t.Errorf("concepts %q lack %q", got[n:], c)
		}
	}
	// Phrases with a stop word inside them still name their concept.
	got, n = terms("log in to the site")
	if !slices.Contains(got[n:], "~login") {
		t.Errorf("concepts of %q lack ~login: %q", "log in to the site", got[n:])
	}
	got, n = terms("open a pull request")
	if !slices.Contains(got[n:], "~pullrequest") {
		t.Errorf("concepts lack ~pullrequest: %q", got[n:])
	}
	// Stop words between the words of a phrase are left out...
	got, n = terms("file a bug")
	if !slices.Contains(got[n:], "~create") {
		t.Errorf("concepts of %q lack ~create: %q", "file a bug", got[n:])
	}
	// ...but other words are not.
	got, n = terms("pull latest request")
	if slices.Contains(got[n:], "~pullrequest") {
		t.Errorf("words that are not neighbours made a phrase: %q", got[n:])
	}
	// The halves of a contraction say nothing either.
	if got, n := terms("I don't think it isn't there"); !reflect.DeepEqual(got[:n], []string{"think"}) {
		t.Errorf("words of a request with contractions = %q, want only %q", got[:n], "think")
	}
	if got, _ := terms("the to of and"); len(got) != 0 {
		t.Errorf("stop words alone gave terms %q", got)
	}
}

func TestFirstSentence(t *testing.T) {
	for _, tc := range []struct{ in, first, rest string }{
		{"Reads a file. Use it for text.", "Reads a file.", " Use it for text."},
		{"Reads a file (e.g. a log). Fast.", "Reads a file (e.g. a log).", " Fast."},
		{"Version 1.2 of the reader", "Version 1.2 of the reader", ""},
		{"First line\n\nSecond paragraph", "First line", "\n\nSecond paragraph"},
		{"", "", ""},
	} {
		first, rest := firstSentence(tc.in)
		if first != tc.first || rest != tc.rest {
			t.Errorf("firstSentence(%q) = %q, %q; want %q, %q", tc.in, first, rest, tc.first, tc.rest)
		}
	}
}

func tool(name, desc string, params ...string) json.RawMessage {
	props := map[string]any{}
	for i := 0; i+1 < len(params); i += 2 {
		props[params[i]] = map[string]any{"type": "string", "description": params[i+1]}
	}
	b, err := json.Marshal(map[string]any{
		"name": name, "description": desc,
		"inputSchema": map[string]any{"type": "object", "properties": props},
	})
	if err != nil {
		panic(err)
	}
	return b
}

var smallDocs = []Doc{
	{Toolbox: "files", Server: "filesystem", Tool: tool("read_text_file", "Read the complete contents of a file as text.", "path", "Path of the file")},
	{Toolbox: "files", Server: "filesystem", Tool: tool("list_directory", "Get a detailed listing of all files and directories in a specified path.", "path", "Directory path")},
	{Toolbox: "files", Server: "filesystem", Tool: tool("move_file", "Move or rename files and directories.", "source", "Where from", "destination", "Where to")},
	{Toolbox: "web", Server: "playwright", ServerDescription: "Browser automation", Tool: tool("browser_navigate", "Navigate to a URL", "url", "The URL to navigate to")},
	{Toolbox: "web", Server: "playwright", ServerDescription: "Browser automation", Tool: tool("browser_take_screenshot", "Take a screenshot of the current page.", "filename", "File name to save the screenshot to")},
	{Toolbox: "code", Server: "github", Tool: tool("create_pull_request", "Create a new pull request in a GitHub repository.", "owner", "Repository owner", "repo", "Repository name", "title", "PR title")},
	{Toolbox: "code", Server: "github", Tool: tool("delete_issue", "Delete an issue.", "issue_number", "The issue's number")},
}

func names(docs []Doc, hits []Hit) []string {
	var out []string
	for _, h := range hits {
		var t struct{ Name string }
		json.Unmarshal(docs[h.Doc].Tool, &t)
		out = append(out, t.Name)
	}
	return out
}

func TestSearchRanks(t *testing.T) {
	ix := NewIndex(smallDocs)
	for _, tc := range []struct{ query, want string }{
		{"read_text_file", "read_text_file"},
		{"show me the contents of config.yaml", "read_text_file"},
		{"what is in this folder", "list_directory"},
		{"rename report.txt", "move_file"},
		{"open the page example.com", "browser_navigate"},
		{"grab an image of what the browser shows", "browser_take_screenshot"},
		{"open a PR with my fix", "create_pull_request"},
		{"remove ticket 12", "delete_issue"},
	} {
		got := names(smallDocs, ix.Search(tc.query, 1))
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("Search(%q) = %q, want %q first", tc.query, got, tc.want)
		}
	}
}

func TestSearchLimitsAndOrder(t *testing.T) {
	ix := NewIndex(smallDocs)
	all := ix.Search("file path", 0)
	if len(all) < 3 {
		t.Fatalf("Search with no limit found %d docs, want at least 3", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Score < all[i].Score || all[i-1].Score == all[i].Score && all[i-1].Doc > all[i].Doc {
			t.Errorf("hits out of order at %d: %+v", i, all)
		}
	}
	if got := ix.Search("file path", 2); !reflect.DeepEqual(got, all[:2]) {
		t.Errorf("limit 2 = %+v, want %+v", got, all[:2])
	}
	for _, h := range all {
		if h.Score <= 0 {
			t.Errorf("hit with score %v", h.Score)
		}
	}
}

func TestSearchTiesAreDeterministic(t *testing.T) {
	same := tool("echo", "Echo the message back.", "message", "Text")
	docs := []Doc{{Server: "a", Tool: same}, {Server: "a", Tool: same}, {Server: "a", Tool: same}}
	hits := NewIndex(docs).Search("echo", 5)
	if len(hits) != 3 || hits[0].Doc != 0 || hits[1].Doc != 1 || hits[2].Doc != 2 {
		t.Errorf("equal docs ranked %+v, want in the order given", hits)
	}
}

func TestSearchNothing(t *testing.T) {
	ix := NewIndex(smallDocs)
	for _, q := range []string{"", "   ", "the of and to", "zzzqqq", "!!!"} {
		if got := ix.Search(q, 5); len(got) != 0 {
			t.Errorf("Search(%q) = %+v, want no hits", q, got)
		}
	}
	// A huge request is read up to its bound, and still finds by its start.
	huge := "move file " + strings.Repeat("zzz ", 1<<20)
	if got := names(smallDocs, ix.Search(huge, 1)); len(got) != 1 || got[0] != "move_file" {
		t.Errorf("a 4 MB request found %q, want move_file", got)
	}
	if got := NewIndex(nil).Search("file", 5); len(got) != 0 {
		t.Errorf("empty index found %+v", got)
	}
}

func TestMalformedTools(t *testing.T) {
	docs := []Doc{
		{Server: "bad", Tool: json.RawMessage(`{"name": "half_parsed", "description": 12, "inputSchema": "nope"}`)},
		{Server: "bad", Tool: json.RawMessage(`not json at all`)},
		{Server: "bad", Tool: nil},
		{Server: "bad", Tool: json.RawMessage(`[1,2,3]`)},
		{Server: "bad", Tool: json.RawMessage(`{"name": "deep", "inputSchema": {"properties": {"a": {"properties": {"b": {"properties": {"c": {"properties": {"d": {"properties": {"e": {"properties": {"buried": {}}}}}}}}}}}}}}`)},
		{Server: "bad", Tool: json.RawMessage(`{"name": "weird_props", "inputSchema": {"properties": {"x": 5, "y": null, "z": {"description": ["no"], "enum": "no"}}}}`)},
		{Server: "fine", Tool: tool("good_tool", "Does good things.")},
	}
	ix := NewIndex(docs)
	if got := names(docs, ix.Search("half parsed", 5)); len(got) == 0 || got[0] != "half_parsed" {
		t.Errorf("a tool with a bad description is not found by its name: %q", got)
	}
	if got := names(docs, ix.Search("weird props", 5)); len(got) == 0 || got[0] != "weird_props" {
		t.Errorf("a tool with bad properties is not found by its name: %q", got)
	}
	// A tool that does not parse is still found by its server.
	if got := ix.Search("bad", 10); len(got) != 6 {
		t.Errorf("Search(bad) = %d hits, want the 6 tools of server bad", len(got))
	}
	// Properties past the depth limit are not read (and nothing recursed forever).
	if got := names(docs, ix.Search("buried", 5)); len(got) != 0 {
		t.Errorf("a property below the depth limit was indexed: %q", got)
	}
	if got := names(docs, ix.Search("good things", 5)); len(got) == 0 || got[0] != "good_tool" {
		t.Errorf("good_tool not found: %q", got)
	}
}

func TestSearchConcurrent(t *testing.T) {
	ix := NewIndex(smallDocs)
	want := ix.Search("take a screenshot of the page", 3)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if got := ix.Search("take a screenshot of the page", 3); !reflect.DeepEqual(got, want) {
					errs <- fmt.Sprintf("concurrent search gave %+v, want %+v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"read_text_file", "read_media_file", "write_file", "list_directory", "browser_navigate", "browser_navigate_back", "create_issue", "get_issue"}
	for _, tc := range []struct {
		name string
		n    int
		want []string
	}{
		{"read_file", 2, []string{"read_text_file", "read_media_file"}},
		{"READ_TEXT_FILE", 1, []string{"read_text_file"}},
		{"navigate", 2, []string{"browser_navigate", "browser_navigate_back"}},
		{"list_directroy", 1, []string{"list_directory"}},
		{"listDirectory", 1, []string{"list_directory"}},
		{"writeFiles", 1, []string{"write_file"}},
		{"get_isue", 1, []string{"get_issue"}},
		{"completely_unrelated", 3, nil},
		{"x", 3, nil},
		{"", 3, nil},
		{"read_file", 0, nil},
	} {
		got := Closest(tc.name, names, tc.n)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Closest(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
	if got := Closest("write_file", []string{"write_file", "write_file", "write_files"}, 5); !reflect.DeepEqual(got, []string{"write_file", "write_files"}) {
		t.Errorf("duplicates: %q", got)
	}
	long := string(make([]byte, 10000))
	if got := Closest(long, names, 3); len(got) != 0 {
		t.Errorf("a long name of NULs matched %q", got)
	}
}

func TestPlainURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"open https://example.com/a?b=c now", "open url now"},
		{"go to www.example.org", "go to url"},
		{"load example.com please", "load url please"},
		{"read src/main.go and ./docs/x", "read path and path"},
		{"edit config.yaml", "edit file"},
		{"routing in Next.js, not app.js", "routing in Next js not file"},
		{"fork torvalds/linux", "fork "},
		{"what's new in v2.3.0", "what's new in version"},
		{"click 'Load more' then wait for \"Saved\"", "click   then wait for  "},
		{"what's Bob's role", "what's Bob's role"},
		{"plain words only", "plain words only"},
		{"e.g. this", "e.g. this"},
	} {
		if got := plainURLs(tc.in); got != tc.want {
			t.Errorf("plainURLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAbbreviations(t *testing.T) {
	for _, pair := range [][2]string{{"repo", "repository"}, {"repos", "repositories"}, {"db", "database"}, {"docs", "documentation"}, {"doc", "document"}, {"k8s", "kubernetes"}, {"a11y", "accessibility"}, {"js", "javascript"}, {"deps", "dependencies"}, {"postgresql", "postgres"}, {"vulns", "vulnerabilities"}, {"ado", "devops"}, {"a11y", "accessible"}} {
		if a, b := stem(pair[0]), stem(pair[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q; want the same", pair[0], a, pair[1], b)
		}
	}
	// Accented Latin letters are read without their accents; other
	// scripts are left alone.
	for _, pair := range [][2]string{{"café", "cafe"}, {"naïve", "naive"}, {"résumé", "resume"}, {"cafe\u0301", "cafe"}, {"straße", "strasse"}} {
		if a, b := stem(pair[0]), stem(pair[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q; want the same", pair[0], a, pair[1], b)
		}
	}
	if got := stem("获取"); got != "获取" {
		t.Errorf("stem(%q) = %q, want it unchanged", "获取", got)
	}
	// British spellings are read as American ones, but for words spelt
	// so in both.
	for _, pair := range [][2]string{{"organisation", "organization"}, {"prioritise", "prioritize"}, {"optimising", "optimizing"}, {"colour", "color"}, {"favourites", "favorites"}, {"analyse", "analyze"}, {"cancelled", "canceled"}} {
		if a, b := stem(pair[0]), stem(pair[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q; want the same", pair[0], a, pair[1], b)
		}
	}
	for _, w := range []string{"advise", "promised", "exercises", "surprise", "otherwise", "enterprise", "revised", "fundraiser"} {
		if got := americanSpelling(w); got != w {
			t.Errorf("americanSpelling(%q) = %q, want it unchanged", w, got)
		}
	}
	// Words the stemmer would join although tools use them for different
	// things keep stems of their own.
	for _, pair := range [][2]string{{"accessibility", "access"}, {"settings", "set"}, {"performance", "perform"}, {"publications", "public"}, {"structured", "structure"}, {"relational", "related"}, {"paste", "past"}, {"promotion", "promote"}} {
		if stem(pair[0]) == stem(pair[1]) {
			t.Errorf("%q and %q share a stem", pair[0], pair[1])
		}
	}
	if stem("production") == stem("product") {
		t.Error("production and product share a stem")
	}
}

func queryTermSet(q string) map[string]float64 {
	m := map[string]float64{}
	for _, t := range queryTerms(q) {
		m[t.term] = max(m[t.term], t.weight)
	}
	return m
}

func TestQueryTerms(t *testing.T) {
	// A phrase stands for its concept alone: "log in" is not about logs.
	got := queryTermSet("log in to the dashboard")
	if got["~login"] != 1 || got["log"] != 0 || got["~log"] != 0 {
		t.Errorf("log in: %v", got)
	}
	// Two nouns name their concept and keep their words: a work item is
	// an issue, and its words say whose.
	got = queryTermSet("update the work item")
	if got["~issue"] == 0 || got["work"] == 0 || got["item"] == 0 {
		t.Errorf("work item: %v", got)
	}
	// A phrase with a verb does not: "merge request" is not merging.
	got = queryTermSet("open a merge request")
	if got["~pullrequest"] == 0 || got["merg"] != 0 || got["~merge"] != 0 {
		t.Errorf("merge request: %v", got)
	}
	// A verb phrase on a word's concept keeps the word: "open a ticket"
	// is creating (not opening) and still about tickets.
	got = queryTermSet("open a ticket")
	if got["~create"] == 0 || got["ticket"] == 0 || got["~issue"] == 0 || got["open"] != 0 || got["~navigate"] != 0 {
		t.Errorf("open a ticket: %v", got)
	}
	// Question words name what is asked for, in requests only.
	if got = queryTermSet("who is on the team"); got["~user"] == 0 {
		t.Errorf("who: %v", got)
	}
	if doc, n := terms("Use this when you need who"); slices.Contains(doc[n:], "~user") || slices.Contains(doc[n:], "~time") {
		t.Errorf("a description's question words named concepts: %q", doc[n:])
	}
	// The words of a later step weigh less.
	got = queryTermSet("read the issue and then close it")
	if !(got["issu"] == 1 && got["close"] > 0 && got["close"] < 1) {
		t.Errorf("later step: %v", got)
	}
}

func TestClauses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"find the bug", []string{"find the bug"}},
		{"find the bug and then fix it", []string{"find the bug", "and then fix it"}},
		{"load the site so I can log in", []string{"load the site", "so I can log in"}},
		{"check logs; restart the pod", []string{"check logs;", "restart the pod"}},
		{"read this and that", []string{"read this and that"}},
		{"then", []string{"then"}},
		{"deploy the app, but first run the tests", []string{"but first run the tests", "deploy the app,"}},
		{"deploy the app; first run the tests", []string{"first run the tests", "deploy the app;"}},
		{"deploy the app after running the tests", []string{"after running the tests", "deploy the app"}},
		{"after running the tests, deploy the app", []string{"after running the tests,", "deploy the app"}},
		{"which calls did the app make after I hit save", []string{"which calls did the app make after I hit save"}},
		{"add a column so that the form can save phones", []string{"add a column", "so that the form can save phones"}},
		{"add a column in order to save phones", []string{"add a column", "in order to save phones"}},
		{"check the logs. Then restart the pod", []string{"check the logs.", "Then restart the pod"}},
	} {
		if got := clauses(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("clauses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNamedServerLifted(t *testing.T) {
	docs := []Doc{
		{Toolbox: "tracker", Server: "github", Tool: tool("create_issue", "Create an issue.")},
		{Toolbox: "boards", Server: "azure", Tool: tool("create_issue", "Create an issue.")},
	}
	ix := NewIndex(docs)
	if hits := ix.Search("create an issue in azure", 2); len(hits) != 2 || hits[0].Doc != 1 {
		t.Errorf("naming the server: %+v, want azure's tool first", hits)
	}
	if hits := ix.Search("create an issue on the tracker", 2); len(hits) != 2 || hits[0].Doc != 0 {
		t.Errorf("naming the toolbox: %+v, want the tracker's tool first", hits)
	}
}

func TestHeavyToolMustMatchBetter(t *testing.T) {
	long := strings.Repeat("x", 40<<10)
	docs := []Doc{
		{Server: "a", Tool: tool("search_places", "Search places.", "padding", long)},
		{Server: "b", Tool: tool("search_places", "Search places.")},
	}
	hits := NewIndex(docs).Search("search places", 2)
	if len(hits) != 2 || hits[0].Doc != 1 || hits[1].Score >= hits[0].Score {
		t.Errorf("equal tools, one of 40 KB: %+v, want the light one first", hits)
	}
}

func TestShareOfWordsMatched(t *testing.T) {
	docs := []Doc{
		{Server: "s", Tool: tool("alpha_tool", "Works on alpha.")},
		{Server: "s", Tool: tool("alpha_beta_tool", "Works on alpha and beta.")},
	}
	ix := NewIndex(docs)
	score := func(q string, doc int) float64 {
		for _, h := range ix.Search(q, 0) {
			if h.Doc == doc {
				return h.Score
			}
		}
		t.Fatalf("%q did not find doc %d", q, doc)
		return 0
	}
	// alpha_tool matches one of the two words of "alpha beta": its score
	// is that of "alpha" alone times the square root of 1/2.
	one, two := score("alpha", 0), score("alpha beta", 0)
	if want := one * math.Sqrt(0.5); math.Abs(two-want) > 1e-9*want {
		t.Errorf("score for half the words = %v, want %v (%v × √½)", two, want, one)
	}
	// A word the index does not know does not count against anyone.
	if unknown := score("alpha zzzqqq", 0); math.Abs(unknown-one) > 1e-9*one {
		t.Errorf("an unknown word changed the score: %v, want %v", unknown, one)
	}
}

func TestRequestIntent(t *testing.T) {
	for q, want := range map[string]int{
		"delete the staging branch":                 intentChange,
		"please add a label to issue 12":            intentChange,
		"what branches exist":                       intentRead,
		"list the open pull requests":               intentRead,
		"dump all stored knowledge":                 intentUnknown, // read and write
		"fix the flaky test in CI":                  intentTask,
		"upgrade the app to the next major version": intentTask,
		"open the settings page":                    intentRead, // read and navigate, not a change
		"click the submit button":                   intentUnknown,
		"":                                          intentUnknown,
		"the build is red; then delete the cache":   intentUnknown, // only the first step counts
		"the dashboard is slow":                     intentUnknown,
	} {
		if got := requestIntent(q); got != want {
			t.Errorf("requestIntent(%q) = %d, want %d", q, got, want)
		}
	}
}

// A request for a change puts a tool that only reads below one that changes,
// other things equal; a task of several steps puts it above. (Equal scores
// keep the docs' order, so each case puts the tool it wants first last.)
func TestIntentOrdersByReadOnlyHint(t *testing.T) {
	reads := Doc{Toolbox: "t", Server: "s", Tool: json.RawMessage(`{"name":"labels","description":"Labels of a repository.","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"}}`)}
	changes := Doc{Toolbox: "t", Server: "s", Tool: json.RawMessage(`{"name":"labels","description":"Labels of a repository.","annotations":{"readOnlyHint":false},"inputSchema":{"type":"object"}}`)}
	for _, c := range []struct {
		query string
		docs  []Doc
	}{
		{"delete a label of the repository", []Doc{reads, changes}},
		{"fix the labels of the repository", []Doc{changes, reads}},
	} {
		hits := NewIndex(c.docs).Search(c.query, 0)
		if len(hits) != 2 || hits[0].Doc != 1 {
			t.Errorf("Search(%q) = %v, want doc 1 first", c.query, hits)
		}
	}
}

func TestNameWords(t *testing.T) {
	doc := Doc{Toolbox: "gh", Server: "github", Tool: json.RawMessage(`{"name":"github_listPullRequests"}`)}
	var got []string
	for _, w := range nameWords(doc, nil) {
		got = append(got, w[0])
	}
	// "github" is the server's; "listpullrequests" is the run kept whole.
	if want := []string{"list", "pull", "request"}; !reflect.DeepEqual(got, want) {
		t.Errorf("nameWords = %v, want %v", got, want)
	}
}

// A tool whose name the request says in full comes before one whose
// description matches as well.
func TestNameCoverage(t *testing.T) {
	docs := []Doc{
		{Toolbox: "t", Server: "s", Tool: json.RawMessage(`{"name":"issue_stats","description":"Counts the labels of each issue; to list them, list the labels first.","inputSchema":{"type":"object"}}`)},
		{Toolbox: "t", Server: "s", Tool: json.RawMessage(`{"name":"list_labels","description":"Labels of an issue.","inputSchema":{"type":"object"}}`)},
	}
	hits := NewIndex(docs).Search("list the labels of the issue", 0)
	if len(hits) != 2 || hits[0].Doc != 1 {
		t.Errorf("hits = %v, want list_labels (doc 1) first", hits)
	}
}

func TestDeletingToolsWaitForADelete(t *testing.T) {
	docs := []Doc{
		{Server: "memory", Tool: tool("delete_observations", "Delete specific observations from entities in the knowledge graph.", "observations", "The observations to delete")},
		{Server: "memory", Tool: tool("add_observations", "Add new observations to existing entities in the knowledge graph.", "observations", "The observations to add")},
	}
	ix := NewIndex(docs)
	// "note" is no verb the tools say: both match by their nouns alone.
	if got := names(docs, ix.Search("note an observation about the project", 1)); !reflect.DeepEqual(got, []string{"add_observations"}) {
		t.Errorf("a request to note something found %v first, want add_observations", got)
	}
	if got := names(docs, ix.Search("remove the observation about the project", 1)); !reflect.DeepEqual(got, []string{"delete_observations"}) {
		t.Errorf("a request to remove something found %v first, want delete_observations", got)
	}
}

func TestReadRequestsPreferReaders(t *testing.T) {
	ro := func(name, desc string, readOnly bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"name": name, "description": desc, "annotations": map[string]any{"readOnlyHint": readOnly}})
		return b
	}
	docs := []Doc{
		{Server: "s", Tool: ro("branches_one", "Branches of a repository.", false)},
		{Server: "s", Tool: ro("branches_two", "Branches of a repository.", true)},
	}
	ix := NewIndex(docs)
	if got := names(docs, ix.Search("what branches does the repository have", 1)); !reflect.DeepEqual(got, []string{"branches_two"}) {
		t.Errorf("a question found %v first, want branches_two, which only reads", got)
	}
}

func TestUnknownWordsFindTheirPrefix(t *testing.T) {
	docs := []Doc{
		{Server: "s", Tool: tool("other_answers", "Answers of another kind.")},
		{Server: "s", Tool: tool("tune_answers", "Tune answers to a person.")},
	}
	ix := NewIndex(docs)
	// "personalise" is not in the index, "person" is.
	if got := names(docs, ix.Search("personalise the answers", 1)); !reflect.DeepEqual(got, []string{"tune_answers"}) {
		t.Errorf("found %v first, want tune_answers", got)
	}
}

func TestWordnetJoinsVerbs(t *testing.T) {
	docs := []Doc{
		{Server: "s", Tool: tool("show_panel", "Show a panel.")},
		{Server: "s", Tool: tool("conceal_panel", "Conceal a panel.")},
		{Server: "s", Tool: tool("copy_record", "Copy a record.")},
		{Server: "s", Tool: tool("mend_record", "Mend a record.")},
	}
	ix := NewIndex(docs)
	for _, tc := range []struct{ query, want string }{
		// "hide" and "conceal" share WordNet's first sense of each.
		{"hide the panel", "conceal_panel"},
		// "repair" and "mend" too, and neither is in concepts.go.
		{"repair a record", "mend_record"},
	} {
		if got := names(docs, ix.Search(tc.query, 1)); !reflect.DeepEqual(got, []string{tc.want}) {
			t.Errorf("Search(%q) found %v first, want %s", tc.query, got, tc.want)
		}
	}
	// A verb's hypernym: to invoice is to bill.
	e, h := wordnet()[stem("invoice")], wordnet()[stem("bill")]
	if len(e.hypernyms) == 0 || len(h.senses) == 0 || !slices.Contains(e.hypernyms, h.senses[0]) {
		t.Errorf("WordNet: invoice %v, bill %v: want bill's sense among invoice's hypernyms", e, h)
	}
}

func TestTasksFindTheirFirstStep(t *testing.T) {
	docs := []Doc{
		{Server: "s", Tool: tool("stop_service", "Stop a service.")},
		{Server: "s", Tool: tool("service_logs", "Read the logs of a service.")},
		{Server: "s", Tool: tool("library_info", "Information about a library.")},
		{Server: "s", Tool: tool("library_docs", "Documentation of a library.")},
	}
	ix := NewIndex(docs)
	for _, tc := range []struct{ query, want string }{
		// Finding out why starts with the logs.
		{"find out why the service is broken", "service_logs"},
		// An upgrade starts with the library's documentation.
		{"upgrade the library", "library_docs"},
	} {
		if got := names(docs, ix.Search(tc.query, 1)); !reflect.DeepEqual(got, []string{tc.want}) {
			t.Errorf("Search(%q) found %v first, want %s", tc.query, got, tc.want)
		}
	}
}

func TestADONamesAzureDevOps(t *testing.T) {
	docs := []Doc{
		{Toolbox: "code", Server: "github", Tool: tool("list_teams", "List the teams of an organization.")},
		{Toolbox: "work", Server: "azure-devops", Tool: tool("list_teams", "List the teams of a project.")},
	}
	ix := NewIndex(docs)
	if got := ix.Search("ADO: which teams are there", 1); len(got) != 1 || got[0].Doc != 1 {
		t.Errorf("found %v first, want the Azure DevOps tool", got)
	}
}

// TestEverydayWordsNameConcepts checks words people use for what tools do
// that the tools' own texts seldom say.
func TestEverydayWordsNameConcepts(t *testing.T) {
	for _, tc := range []struct{ text, concept string }{
		{"switch the site to night mode", "~colorscheme"},
		{"how much RAM does the tab use", "~heap"},
		{"make a buy link for the ebook", "~paymentlink"},
		{"search the team knowledge base", "~wiki"},
		{"any chatter about the outage", "~news"},
		{"run five copies of the api", "~scale"},
		{"make copies of the file", "~copy"},
		{"a good café for lunch", "~location"},
		{"what broke in the k8s cluster", "~kubernetes"},
		{"LGTM the change", "~review"},
	} {
		if got, n := terms(tc.text); !slices.Contains(got[n:], tc.concept) {
			t.Errorf("concepts of %q = %q, want %s", tc.text, got[n:], tc.concept)
		}
	}
	// "copy" alone is not a replica.
	if got, n := terms("copy the file"); slices.Contains(got[n:], "~scale") {
		t.Errorf("concepts of %q = %q, want no ~scale", "copy the file", got[n:])
	}
}

// TestEveryEntryNamesItsConcept: each word and phrase of the thesaurus,
// written as a request would write it, names its concept (a phrase of three
// words, or one that starts with a stop word before another, never would).
func TestEveryEntryNamesItsConcept(t *testing.T) {
	for _, line := range conceptGroups {
		name, words, _ := strings.Cut(line, ":")
		for _, w := range strings.Fields(words) {
			if strings.Contains(w, "~") {
				continue
			}
			text := strings.ReplaceAll(w, "+", " ")
			if got, n := terms(text); !slices.Contains(got[n:], "~"+name) {
				t.Errorf("%s: %q does not name it (concepts %q)", name, text, got[n:])
			}
		}
	}
}

// A tool that does not say whether it only reads is read from its name's
// verbs: a task ("fix ...") starts with the one that looks, a change is
// seldom served by it.
func TestReadOnlyFromNameVerbs(t *testing.T) {
	reads := Doc{Toolbox: "t", Server: "s", Tool: tool("get_labels", "Labels of a repository.")}
	changes := Doc{Toolbox: "t", Server: "s", Tool: tool("update_labels", "Labels of a repository.")}
	for _, c := range []struct {
		query string
		docs  []Doc
		want  string
	}{
		{"fix the labels of the repository", []Doc{changes, reads}, "get_labels"},
		{"investigate the labels of the repository", []Doc{changes, reads}, "get_labels"},
	} {
		hits := NewIndex(c.docs).Search(c.query, 0)
		if len(hits) != 2 || hits[0].Doc != 1 {
			t.Errorf("Search(%q) = %v, want %s first", c.query, hits, c.want)
		}
	}
	for verbs, want := range map[string]int8{"get": 1, "list": 1, "search": 1, "create": -1, "delete": -1, "get update": -1, "navigate": 0, "": 0} {
		if got := verbsReadOnly(verbs, nil); got != want {
			t.Errorf("verbsReadOnly(%q) = %d, want %d", verbs, got, want)
		}
	}
}
