package search

import (
	"slices"
	"strings"
	"sync"
)

// conceptGroups is the search's small thesaurus: the words an agent uses for
// the same action or thing, so that "remove the ticket" finds delete_issue.
// Each line is a concept and the words (or two-word phrases, joined by "+")
// that name it; a word may name several concepts. Words are written plainly
// and stemmed when the table is built, so "deleting" and "deletes" match too.
// A phrase's second word may be a concept ("open+~issue" is also "open a
// ticket"); stop words between a phrase's words are skipped ("file a bug").
//
// Documents and requests both get the concepts of their words as extra terms
// (see [appendConcepts]), so a request word and a tool word meet when they
// share a concept, while the same word on both sides still counts for more.
// The table is general vocabulary of tools and agents' requests, written
// from the tools' domains (files, browsers, code hosting, CI, databases,
// payments, clusters, search, notes); it is not keyed to any evaluation
// request.
var conceptGroups = append(append([]string{}, actionGroups...), thingGroups...)

// actionGroups are the concepts of verbs: what is to be done. Every server
// can "get" and "list", so the verbs of a tool's name are a field of their
// own, weighed less than its other words (fieldNameVerb), and a request's
// verbs have a weight of their own (actionWeight).
var actionGroups = []string{
	"delete: delete remove erase destroy drop trash purge rm del unlink discard wipe forget uninstall rid ditch toss scrap nuke prune obliterate tear+down teardown",
	"create: create creation made make new add insert generate init initialize register open+new file+~issue raise+~issue open+~issue open+~pullrequest submit+~issue log+~issue spin+up set+up mkdir fresh spin+up start+new append provision sign+up whip+up put+together",
	"update: update edit modify change alter patch amend revise tweak adjust set refactor rewrite correct replace upsert bump swap substitute sync synchronize catch+up rebase reword rephrase retitle flip",
	"read: read get fetch retrieve view show display open cat see look inspect obtain access print peek dump export pull+up take+look glance grab skim eyeball",
	"list: list enumerate ls browse show index overview what+are",
	"search: search find found lookup look+up query grep locate seek hunt discover match google anywhere dig+up track+down scour comb+through",
	"write: write save put persist dump record overwrite jot+down stash jot backfill compose",
	"move: move mv relocate rename",
	"copy: copy cp duplicate clone fork copies",
	"run: run ran execute exec invoke launch trigger start kick+off rerun shell ssh restart reboot bounce fire+up boot",
	"stop: stop kill terminate halt cancel abort unsubscribe suspend hibernate shutdown shut+down",
	"close: close shut quit exit dismiss clear",
	"send: send sent post publish notify dispatch deliver share tell announce fire+off broadcast",
	"navigate: navigate go goto visit open browse load go+to bring+up reload",
	"back: back previous go+back return+to",
	"click: click press tap hit double+click right+click",
	"type: type fill enter keyboard keystroke typing key+in fill+out complete",
	"wait: wait sleep pause delay",
	"download: download scrape scraping fetch gather collect harvest",
	"crawl: crawl crawler crawling spider every+page whole+site entire+site all+pages",
	"upload: upload attach attachment",
	"merge: merge combine squash land landed",
	"compare: compare diff difference changes changed delta versus vs",
	"convert: convert translate transform turn+into",
	"summarize: summarize summary digest tldr overview recap synopsis condense boil+down",
	"think: think thinking reasoning reflect brainstorm thought step+by break+down ponder deliberate carefully chain+thought think+through walk+through problem+solving hypothesis hypotheses",
	"sum: sum plus addition add calculate compute arithmetic",
	"echo: echo repeat parrot",
	"scroll: scroll",
	"hover: hover mouseover mouse+over",
	"drag: drag drop",
	"select: select choose pick option dropdown switch",
	"login: login logon signin sign+in log+in logged+in authenticate authenticated auth authorize whoami who+am sso oauth",
	"evaluate: evaluate eval javascript js script sessionstorage localstorage cookie cookies",
	"review: review approve approval lgtm sign+off signoff request+changes reviewer reviewers code+review",
	"assign: assign assignee owner assigned reassign delegate hand+off handoff take+over",
	"resize: resize viewport dimension dimensions width height wide tall",
	"install: install setup",
	"deploy: deploy deployment ship shipped release rollout publish promote roll+out go+live",
	"scale: scale replicas replica autoscale copies scale+up scale+down horizontal+scaling",
	"undo: undo revert rollback roll+back restore resume unpause reactivate bring+back wake wake+up undelete recover recovery",
	"monitor: monitor monitoring watch watcher watchers track tracking alert keep+eye uptime keep+tabs",
	"refund: refund reimburse money+back charge+back chargeback",
	"analyze: analyze analyse analysis investigate diagnose debug root+cause dig+into dig+through",
	"explain: explain explanation mean meaning means definition define clarify elaborate",
	"resolve: resolve resolved ignore ignored mute silence snooze unresolve reopen mark+fixed mark+resolved wontfix",
	"forward: forward expose reachable tunnel",
	"toggle: toggle enable disable turn+on turn+off switch+on switch+off activate deactivate",
}

// thingGroups are the concepts of nouns and qualities: what it is done to.
var thingGroups = []string{
	"file: file files path filesystem fs disk pdf readme license makefile dockerfile",
	"directory: directory folder dir filesystem folders subfolder subfolders subdirectory subdirectories subdir parent+folder",
	"tree: tree hierarchy recursive nested structure layout laid+out outline file+tree folder+structure directory+structure",
	"metadata: metadata info information details stat stats properties attributes permissions timestamp mtime last+modified last+changed last+updated modification+time mime+type file+size creation+date",
	"size: size sizes big bigger biggest large larger largest small smaller smallest tiny little bytes disk+space disk+usage hog hogging",
	"content: content contents text inside paragraph paragraphs html+source page+source view+source",
	"multiple: multiple many several batch bulk together simultaneously at+once",
	"allowed: allowed permitted permission permissions authorized who+can rbac access+control",
	"count: count how+many statistics how+often occurrences",
	"issue: issue ticket bug defect work+item workitem triage jira bug+report feature+request user+story epic tickets bugs",
	"pullrequest: pr prs mr pull+request merge+request",
	"repository: repository repo codebase monorepo repositories",
	"commit: commit commits changeset revision sha push history commit+history git+history git+log blame",
	"branch: branch",
	"comment: comment reply remark annotation feedback leave+note leave+comment",
	"message: message msg chat dm said say discussion sms text+message texting",
	"channel: channel room conversation thread",
	"user: user member person people profile teammate colleague username collaborator collaborators contributor contributors maintainer maintainers nickname usernames login+name screen+name folks coworker coworkers",
	"self: me myself self whoami who+am my+account",
	"team: team org organization squad staff department dept",
	"webpage: webpage web+page website site url link address href page endpoint domain subdomain blog hyperlink hyperlinks permalink",
	"screenshot: screenshot screen+shot screengrab capture printscreen print+screen screen+grab",
	"image: image picture photo photos png jpeg jpg icon graphic screenshot",
	"tab: tab window",
	"browser: browser chrome chromium playwright puppeteer dom headless",
	"console: console devtools javascript+error js+error",
	"network: network http traffic xhr ajax api+call api+calls har waterfall",
	"element: element button selector menu",
	"form: form field fields box textbox textarea signup",
	"time: time clock hour date now today",
	"timezone: timezone time+zone tz utc",
	"recent: recent recently lately latest last newest yesterday",
	"database: database db sql table tables schema column row postgres postgresql mysql sqlite supabase data+source datastore data+store rdbms relational nosql",
	"row: row rows entry",
	"schema: schema columns column ddl migration add+column alter+table table+structure data+model foreign+key foreign+keys primary+key constraint constraints database+structure db+structure describe+table describe+tables",
	"email: email mail inbox gmail outlook",
	"calendar: calendar meeting appointment",
	"location: location place places address map maps geocode coordinates latitude longitude nearby near around+me shops restaurants restaurant cafe eat food hotel business businesses poi venue venues bar bars pub pubs coffee cafes grocery pharmacy gym museum parking attraction attractions landmark landmarks zip+code postcode opening+hours open+now",
	"directions: directions distance travel commute",
	"weather: weather forecast temperature",
	"error: error errors exception exceptions crash crashes failure failing failed broken stacktrace stack+trace traceback bug error+tracker crash+reporting glitch blowup blow+up crashed crashing crashloop crashloopbackoff oomkilled oom panic panics incident incidents",
	"log: log logs history output tail console print printed",
	"entity: entity entities node",
	"relation: relation relationship link connect associate relate manages reports+to relationships links+between",
	"observation: observation fact facts note",
	"graph: graph knowledge",
	"memory: memory knowledge remember memorize recall forget stored know jot+down keep+mind on+record remember+that record+that note+that store+that know+about",
	"env: env environment variable variables envvar",
	"config: config configuration setting settings preference preferences context",
	"secret: secret secrets password credential credentials api+key leak leaked leaked+secret exposed+secret exposed+key exposed+token leaked+key hardcoded+password hardcoded+secret apikey jwt bearer secret+scanning",
	"payment: payment payments charge charges invoice bill billing refund checkout paid pay transaction transactions purchase purchases credit+card debit+card",
	"money: money balance funds revenue payout cash earnings income payouts available+balance",
	"discount: discount coupon promo promotion voucher promo+code sale deal",
	"plan: subscription plan membership recurring monthly renewal annual yearly tier trial free+trial",
	"customer: customer customers buyer payer payers subscriber subscribers shopper shoppers purchaser patron",
	"product: product products price pricing catalog goods merchandise sell offering offerings sku",
	"web: web internet online google bing duckduckgo search+engine",
	"documentation: documentation docs manual reference guide tutorial how+to how+do api+reference api+docs cheatsheet man+page manpage",
	"code: code function class snippet todo fixme codebase symbol symbols implementation",
	"version: version release tag changelog semver",
	"package: package dependency dependencies module library dependabot framework frameworks sdk sdks npm pypi crate crates",
	"vulnerability: vulnerability vulnerable vulnerabilities cve security advisory dependabot warning warnings advisor advisors cves exploit exploits insecure ghsa security+scan security+alert security+alerts",
	"test: test tests qa quality+assurance",
	"cache: cache redis",
	"workflow: workflow pipeline ci job action actions build cicd github+actions runner runners workflows build+job gha",
	"notification: notification notifications inbox unread mention mentions ping pings unread+notifications watching unwatch",
	"label: label tag category categorize tagging",
	"status: status state health progress healthcheck health+check",
	"llm: llm model sampling ai copilot agent bot assistant seer gpt openai chatbot",
	"video: video videos youtube clip clips movie footage trailer trailers vlog",
	"news: news headline headlines article articles story stories world globe current+events chatter buzz press+coverage breaking+news current+affairs media+coverage press+release press+releases",
	"paper: paper papers academic research arxiv scholarly scientific study studies publication publications journal citation citations preprint preprints pubmed doi",
	"note: note notes notebook wiki memo memos scratchpad",
	"kubernetes: kubernetes k8s kubectl kubeconfig pod pods cluster namespace deployment helm node nodes workload workloads worker+node kube minikube kind+cluster eks gke aks",
	"performance: performance slow speed profile trace lighthouse vitals web+vitals core+web+vitals lcp inp cls jank janky sluggish laggy lag load+time page+speed pagespeed profiler profiling flamegraph flame+graph bottleneck load+test load+testing stress+test stress+testing benchmark benchmarks latency response+time throughput",
	"sprint: sprint iteration milestone backlog sprints iterations roadmap",
	"dialog: dialog popup modal banner pop+up",
	"emulate: emulate simulate mimic dark+mode light+mode mobile device throttle throttling throttled slow+network offline+mode geolocation user+agent useragent reduced+motion",
	"storage: storage bucket buckets blob s3 object+storage file+storage",
	"reaction: reaction emoji thumbs",
	"star: star starred favorite bookmark favourite favorites favourites bookmarks",
	"recording: screencast recording video film filming screen+recording record+screen",
	"markdown: markdown md plain+text clean+text readable",
	"extract: extract extraction parse structured",
	"chart: chart helm values+file helm+release helm+releases",
	"port: port ports localhost",
	"manifest: manifest yaml spec",
	"project: project projects instance board boards kanban",
	"snippet: gist snippet paste pastebin",
	"template: template templates boilerplate scaffold",
	"key: keystroke enter escape esc shortcut hotkey keyboard key+press keypress key+combination press+key",
	"identity: identity id ids identifier",
	"cost: cost costs price pricing spend spending set+back expensive cheap afford",
	"document: document documents pdf docx",
	"dispute: dispute disputes chargeback contested fraud fraudulent",
	"audio: audio sound music mp3 wav voice",
	"media: media image audio video binary base64 picture photo png jpg jpeg gif",
	"compress: compress gzip zip deflate shrink",
	"sample: sample demo code+example code+examples code+sample code+samples usage+example usage+examples",
	"accessibility: accessibility a11y aria screen+reader screenreader wcag alt+text accessible",
	"board: board boards kanban",
	"discussion: discussion discussions forum q+a",
	"artifact: artifact artifacts binaries binary build+output compiled",
	"capacity: capacity availability bandwidth days+off time+off vacation pto ooo holiday holidays",
	"function: function functions serverless lambda edge+function cloud+function cloud+functions edge+functions faas deno",
	"extension: extension extensions plugin plugins addon add+on pgvector postgis",
	"types: typings typescript codegen type+definitions type+defs",
	"sitemap: sitemap site+map every+url all+urls all+links every+link url+inventory",
	"usage: usage quota credits credit remaining",
	"resource: resource resources kind kinds crd crds cronjob cronjobs statefulset statefulsets daemonset daemonsets replicaset replicasets ingress configmap configmaps",
	"maintenance: cordon drain maintenance",
	"colorscheme: colorscheme color+scheme colour+scheme dark+mode light+mode night+mode dark+theme light+theme dark+color dark light+color forced+colors high+contrast",
	"heap: heap heapsnapshot ram memory+leak memory+leaks memory+usage memory+footprint allocation allocations garbage+collection",
	"style: css style styles stylesheet stylesheets styling computed+style font fonts typography typeface",
	"subissue: sub+issue subissue subissues child+issue parent+issue subtask subtasks sub+task",
	"wiki: wiki wikis knowledge+base kb confluence handbook runbook runbooks playbook intranet",
	"paymentlink: payment+link buy+link checkout+link pay+link purchase+link buy+button checkout+page payment+page",
	"invoice: invoice invoices receipt receipts line+item",
	"block: block blocks bullet bullets callout checklist heading headings paragraph paragraphs",
	"metric: metric metrics telemetry measurement measurements time+series kpi kpis",
	"speech: speech transcribe transcription speech+to+text text+to+speech tts stt dictation",
	"firewall: firewall allowlist whitelist ip+rule ip+range",
	"queue: queue queues message+queue pubsub pub+sub",
	"embedding: embedding embeddings vector vectors vectorize",
	"iac: terraform bicep iac infrastructure+as+code",
	"registry: registry registries container+registry docker+hub acr ecr",
	"pagesnapshot: accessibility+tree a11y+tree accessibility+snapshot aria+snapshot text+snapshot dom+tree",
	"codescanning: code+scanning codeql sast static+analysis",
	"rag: rag grounding retrieval+augmented llm+context",
}

// firstStepGroups say what a task's first step looks for, for the words
// that name a task of several steps rather than a tool's action: reviewing
// a change starts by reading it, an upgrade by the library's documentation,
// finding out why something fails by its logs and errors, billing someone
// by finding the customer. Each line is a concept (or several, joined by
// ",") and the words whose task starts there; a request's word gets them as
// terms at firstStepWeight. General knowledge of software work, as
// concepts.go is; not keyed to any evaluation request.
var firstStepGroups = []string{
	"read,compare: review reviewing address feedback",
	"documentation,version: upgrade upgrading migrate migrating migration adopt port",
	"log,error,status: why broken failing fails flaky restarting crashing outage red down regression slow stale",
	"customer: bill billing consulting",
	"product: sell selling",
	"copy: contribute contributing",
	"search,web: competitor competitors compare comparing research",
	"paper: literature",
	"search,read: summarize summarise",
	"think: plan planning tricky strategy",
	"list,issue: triage",
	"user,team: onboard onboarding",
	"commit,pullrequest,version: changelog",
	"crawl: dataset archive mirror",
}

// firstSteps maps a stem to the concepts of its task's first step. It,
// actionStems and concepts are built on first use, not at start: their
// words are stemmed, which a workbench that never searches need not pay.
var firstSteps = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, line := range firstStepGroups {
		names, words, _ := strings.Cut(line, ":")
		for _, w := range strings.Fields(words) {
			for _, c := range strings.Split(names, ",") {
				m[stem(w)] = append(m[stem(w)], "~"+c)
			}
		}
	}
	return m
})

// actionStems are the stems of the single words of [actionGroups].
var actionStems = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, line := range actionGroups {
		_, words, _ := strings.Cut(line, ":")
		for _, w := range strings.Fields(words) {
			if !strings.Contains(w, "+") && !stopWords()[w] {
				m[stem(w)] = true
			}
		}
	}
	return m
})

// concepts maps a stem (or two stems joined by a space) to the concepts it
// names, each as a term that no word can produce ("~delete").
var concepts = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, line := range conceptGroups {
		name, words, _ := strings.Cut(line, ":")
		term := "~" + name
		for _, w := range strings.Fields(words) {
			parts := strings.Split(w, "+")
			if n := len(parts); n > 2 {
				// "infrastructure+as+code": the stop words inside are
				// skipped, as in a request (see [conceptPairs]).
				inner := slices.DeleteFunc(slices.Clone(parts[1:n-1]), func(p string) bool { return stopWords()[p] })
				parts = slices.Concat(parts[:1], inner, parts[n-1:])
			}
			for i, p := range parts {
				if !stopWords()[p] && !strings.HasPrefix(p, "~") {
					parts[i] = stem(p)
				}
			}
			key := strings.Join(parts, " ")
			if !slices.Contains(m[key], term) {
				m[key] = append(m[key], term)
			}
		}
	}
	return m
})

// appendConcepts appends to out the concepts named by each stem and by each
// pair of stems (see [conceptPairs]). Stems holds every word, stop words
// included, so that phrases such as "log in" and "look up" are seen.
func appendConcepts(out, stems []string) []string {
	for _, s := range stems {
		// A stop word names a concept only where the table says so ("me").
		out = append(out, concepts()[s]...)
		if useWordnet(s) {
			e := wordnet()[s]
			out = append(out, e.senses...)
			if wordnetDocHypernyms {
				out = append(out, e.hypernyms...)
			}
		}
	}
	for _, p := range conceptPairs(stems) {
		out = append(out, p.concepts...)
	}
	return out
}

// A pair of words that names concepts.
type pair struct {
	first, second int // indexes in the stems
	concepts      []string
	// whole is true when the pair names its concepts as two words
	// ("pull request"), false when its second word keeps its own meaning
	// too ("open" + a word for an issue names creating one).
	whole bool
}

// conceptPairs returns the pairs of stems that name a concept: two
// neighbours, or two words with only stop words between them ("file a bug"),
// where the table's phrase names the second word itself ("pull+request") or
// one of its concepts ("open+~issue" is also "open a ticket").
func conceptPairs(stems []string) []pair {
	var pairs []pair
	match := func(i, j int) bool {
		var found []string
		add := func(key string) {
			for _, c := range concepts()[key] {
				if !slices.Contains(found, c) {
					found = append(found, c)
				}
			}
		}
		add(stems[i] + " " + stems[j])
		whole := len(found) > 0
		if !stopWords()[stems[j]] {
			for _, c := range concepts()[stems[j]] {
				add(stems[i] + " " + c)
			}
		}
		if len(found) == 0 {
			return false
		}
		pairs = append(pairs, pair{i, j, found, whole})
		return true
	}
	for i := 0; i+1 < len(stems); i++ {
		if match(i, i+1) || stopWords()[stems[i]] {
			continue
		}
		j := i + 1
		for j < len(stems) && stopWords()[stems[j]] {
			j++
		}
		if j > i+1 && j < len(stems) {
			match(i, j)
		}
	}
	return pairs
}
