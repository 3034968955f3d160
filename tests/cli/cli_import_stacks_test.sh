#!/usr/bin/env bash
# `kcx import` end to end on the serving stacks' own files (tests/data/stacks, issue 18):
# each pair gives the `kcx metrics --json` figures of one SPEC 1.1 run written here by hand;
# failed batch requests are listed and --strict refuses them; vLLM's floor is counted;
# other tools' files (.pt) are named with the way to convert them.
# Usage: cli_import_stacks_test.sh KCX WORKDIR STACKS_DIR
set -u
kcx="$1"; work="$2"; stacks="$3"
rm -rf "$work"; mkdir -p "$work"; cd "$work"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   # check, contains, py, pass/fail
# same_metrics NAME A.json B.json: every metric of the two `kcx metrics --json` outputs equal.
same_metrics() {
  $py - "$2" "$3" <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL $1: metrics differ"; }
import json, sys
a, b = (json.load(open(p))["metrics"] for p in sys.argv[1:3])
assert a == b, [(k, a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)]
PY
}

# Hello/world/! : inf -0.25/-1.5/-0.125, train -0.5/-1.25/-0.0625; inf top-2 sorted by hand.
# Llama ids as TGI gives them; the vocabulary ids (first appearance) for string-only shapes.
printf '%s\n' '{"id":"s","tokens":[9906,1917,0],"logp_train":[-0.5,-1.25,-0.0625],"logp_inf":[-0.25,-1.5,-0.125],"topk_inf":{"ids":[[9906,13347],[1070,1917],[0,13]],"logp":[[-0.25,-2.0],[-0.5,-1.5],[-0.125,-2.25]]}}' > spec_llama.jsonl
printf '%s\n' '{"id":"s","tokens":[0,2,4],"logp_train":[-0.5,-1.25,-0.0625],"logp_inf":[-0.25,-1.5,-0.125],"topk_inf":{"ids":[[0,1],[3,2],[4,5]],"logp":[[-0.25,-2.0],[-0.5,-1.5],[-0.125,-2.25]]}}' > spec_vocab.jsonl
check spec-llama 0 "$kcx" metrics --run spec_llama.jsonl --json spec_llama.json --quiet
check spec-vocab 0 "$kcx" metrics --run spec_vocab.jsonl --json spec_vocab.json --quiet
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL hand figures"; }
import json
m = json.load(open("spec_llama.json"))["metrics"]
assert m["abs_log_ratio"]["mean"] == (0.25 + 0.25 + 0.0625) / 3, m["abs_log_ratio"]
assert m["abs_log_ratio"]["max"] == 0.25
PY

# TGI /generate with details (an id added, as docs/formats.md says to when dumping).
sed 's/^{/{"kcx_id":"t1",/' "$stacks/tgi_generate_details.json" > tgi.json
echo '{"id":"t1","tokens":[9906,1917,0],"logp_train":[-0.5,-1.25,-0.0625]}' > train_tgi.jsonl
check tgi 0 "$kcx" import --inf tgi.json --train train_tgi.jsonl --out tgi.safetensors
check tgi-metrics 0 "$kcx" metrics --run tgi.safetensors --json tgi_m.json --quiet
same_metrics tgi tgi_m.json spec_llama.json

# A vLLM chat stream (server-sent events) and the Responses API.
for shape in sse:sse_vllm_chat_stream.txt:chatcmpl-kcx0005 responses:openai_responses_logprobs.json:resp_kcx0001; do
  IFS=: read -r name file id <<<"$shape"
  echo '{"id":"'"$id"'","tokens":["Hello"," world","!"],"logp_train":[-0.5,-1.25,-0.0625]}' > "train_$name.jsonl"
  check "$name" 0 "$kcx" import --inf "$stacks/$file" --train "train_$name.jsonl" --out "$name.safetensors"
  check "$name-metrics" 0 "$kcx" metrics --run "$name.safetensors" --json "${name}_m.json" --quiet
  same_metrics "$name" "${name}_m.json" spec_vocab.json
done

# Failed batch requests: listed with file, line, id and message; the rest imports.
echo '{"id":"request-1","tokens":["Hello"," world","!"],"logp_train":[-0.5,-1.25,-0.0625]}' > train_batch.jsonl
check batch 0 "$kcx" import --inf "$stacks/vllm_run_batch_output_with_failure.jsonl" --train train_batch.jsonl --out batch.safetensors
contains batch-listed err.txt "2 failed request(s) in the inf file, left out"
contains batch-line3 err.txt "vllm_run_batch_output_with_failure.jsonl:3: request-3: Request must not be sent in stream mode"
contains batch-summary out.txt "skipped (failed requests): inf 2, train 0"
check batch-strict 2 "$kcx" import --strict --inf "$stacks/openai_batch_output_with_failure.jsonl" --train train_batch.jsonl --out strict.safetensors
contains batch-strict-says err.txt "--strict: 2 record(s) skipped; nothing written"
[ ! -e strict.safetensors ] && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL --strict wrote a run"; }

# n = 2: one record per choice, ID#INDEX.
head -n 1 "$stacks/vllm_chat_n2.jsonl" > n2.jsonl
printf '%s\n' '{"id":"chatcmpl-kcx0002#0","tokens":["Hello"," world","!"],"logp_train":[-0.5,-1.25,-0.0625]}' \
  '{"id":"chatcmpl-kcx0002#1","tokens":["Hello"," there","!"],"logp_train":[-0.5,-0.75,-0.0625]}' > train_n2.jsonl
check n2 0 "$kcx" import --inf n2.jsonl --train train_n2.jsonl --out n2.safetensors
contains n2-summary out.txt "n2.safetensors: 2 sequences, 6 tokens (2 paired"
contains n2-split out.txt "choices split: 1 response(s) with several choices"

# vLLM's floor: the sampled -9999.0 is -inf (non-finite), not missing.
echo '{"id":"f","choices":[{"index":0,"logprobs":{"content":[{"token":"a","logprob":-9999.0,"top_logprobs":[]},{"token":"b","logprob":-1.0,"top_logprobs":[]}]}}]}' > floor.jsonl
echo '{"id":"f","tokens":["a","b"],"logp_train":[-20.0,-1.5]}' > train_floor.jsonl
check floor 0 "$kcx" import --inf floor.jsonl --train train_floor.jsonl --out floor.safetensors
contains floor-summary out.txt "floored log-probs (vLLM's -9999.0, read as -inf, non-finite): inf 1, train 0"
contains floor-missing out.txt "missing log-probs (null): inf 0, train 0"
check floor-metrics 0 "$kcx" metrics --run floor.safetensors --json floor_m.json --quiet
$py - <<'PY' && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL floor figures"; }
import json
m = json.load(open("floor_m.json"))["metrics"]["abs_log_ratio"]
assert m["nonfinite_count"] == 1 and m["missing_count"] == 0 and m["mean"] == 0.5, m
PY

# A torch.save file: named, with where the conversion is.
printf 'PK\003\004' > slime.pt; head -c 22 /dev/zero >> slime.pt; printf '\020\000\000\000archive/data.pkl' >> slime.pt; head -c 64 /dev/zero >> slime.pt
check pt-metrics 2 "$kcx" metrics --run slime.pt
contains pt-metrics-says err.txt "slime.pt: is a PyTorch file (torch.save"
contains pt-metrics-docs err.txt "docs/formats.md"
check pt-import 2 "$kcx" import --inf slime.pt --train train_floor.jsonl --out pt.safetensors
contains pt-import-says err.txt "slime.pt: is a PyTorch file (torch.save"

echo "cli_import_stacks: $pass passed, $fail failed"
[ "$fail" = 0 ]
