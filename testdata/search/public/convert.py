"""Writes the public sets of testdata/search/public from their sources.

Usage: python3 convert.py SRC OUT, where SRC holds the source files taken
with git show from the two repositories at the commits README.md names:

  az-tools.json    microsoft/mcp   eng/tools/ToolDescriptionEvaluator/tools.json
  az-prompts.json  microsoft/mcp   eng/tools/ToolDescriptionEvaluator/prompts.json
  mp-corpus.json   mcpproxy-go     specs/065-evaluation-foundation/datasets/corpus_v1.json
  mp-golden.json   mcpproxy-go     specs/065-evaluation-foundation/datasets/retrieval_golden_v1.json
"""
import json, hashlib, collections, sys
src, out = sys.argv[1].rstrip('/') + '/', sys.argv[2].rstrip('/') + '/'

def dump(obj, key, path):
    # One tool per line: compact, and still a line to read per tool.
    head = json.dumps({k: v for k, v in obj.items() if k != key}, ensure_ascii=False)[:-1]
    items = ',\n'.join(json.dumps(x, ensure_ascii=False) for x in obj[key])
    open(path, 'w').write(head + ', "' + key + '": [\n' + items + '\n]}\n')

def dumplist(xs, path):
    open(path, 'w').write('[\n' + ',\n'.join(json.dumps(x, ensure_ascii=False) for x in xs) + '\n]\n')
def split(q):
    # Half of each set, by a hash of the request: "tune" may be looked at while tuning, "held-out" never.
    return 'held-out' if hashlib.sha256(q.encode()).digest()[0] % 2 else 'tune'

# Azure MCP Server (microsoft/mcp, ToolDescriptionEvaluator)
t=json.load(open(src+'az-tools.json'))['results']
tools=[]
for x in t:
    props={}; req=[]
    for o in x.get('option') or []:
        n=o['name'].lstrip('-')
        p={'type': o.get('type') or 'string', 'description': o.get('description') or ''}
        props[n]=p
        if o.get('required'): req.append(n)
    schema={'type':'object','properties':props}
    if req: schema['required']=req
    tools.append({'name': x['command'].replace(' ','_'), 'description': x['description'], 'inputSchema': schema})
names={x['name'] for x in tools}
dump({'server':'azure','source':'github.com/microsoft/mcp eng/tools/ToolDescriptionEvaluator/tools.json','commit':'2c930f6f591f94a1b52a2fecc26fe0f076ce38fa','license':'MIT','tools':tools}, 'tools', out+'azure-tools.json')
p=json.load(open(src+'az-prompts.json'))
qs=[]; seen=set()
for tool, prompts in p.items():
    if tool not in names: continue
    for q in prompts:
        if q in seen: continue
        seen.add(q)
        qs.append({'query':q,'expect':['azure/'+tool],'split':split(q)})
dumplist(qs, out+'azure-queries.json')
print('azure', len(tools), len(qs), collections.Counter(x['split'] for x in qs))

# mcpproxy's Spec 065 retrieval golden set
c=json.load(open(src+'mp-corpus.json'))['tools']
servers=collections.OrderedDict()
for x in c:
    servers.setdefault(x['server'],[]).append({'name':x['tool'],'description':x['description']})
json.dump({'source':'github.com/smart-mcp-proxy/mcpproxy-go specs/065-evaluation-foundation/datasets/corpus_v1.json','commit':'50db38ae3955e5771365089e9c7ad8e42f2d001a','license':'MIT','servers':[{'server':s,'tools':v} for s,v in servers.items()]}, open(out+'mcpproxy-tools.json','w'), indent=1, ensure_ascii=False)
g=json.load(open(src+'mp-golden.json'))['queries']
qs=[]
for q in g:
    exp=[l['tool_id'].replace(':','/') for l in q['labels'] if l['relevance']>=1]
    qs.append({'query':q['query'],'expect':exp,'split':split(q['query'])})
dumplist(qs, out+'mcpproxy-queries.json')
print('mcpproxy', len(c), len(qs), collections.Counter(x['split'] for x in qs))
