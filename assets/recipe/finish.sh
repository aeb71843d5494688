#!/usr/bin/env bash
# After a training run: checkpoint folder (from train.py on the GPU machine) -> assets/qwenchat-default.gguf,
# checked and measured here on the CPU. Run from the repository root:
#   assets/recipe/finish.sh CHECKPOINT_DIR DATA_DIR [BUILD_DIR]
# CHECKPOINT_DIR: config.json, model.safetensors.index.json, model-*.safetensors (train.py's --out)
# DATA_DIR: prepare_data.py's output plus tokenize_data.py's valid.u16 (for the measurements)
# Writes assets/qwenchat-default.gguf (Q8_0 with the MTP block) and assets/recipe/metrics-cpu.json.
set -euo pipefail
DATA=$2
BUILD=${3:-build}
R=assets/recipe
CK=$(mktemp -d)  # the returned files may be read-only: work on a copy with the tokenizer files added
trap 'rm -rf "$CK"' EXIT
cp "$1"/config.json "$1"/model.safetensors.index.json "$1"/model-*.safetensors "$CK/"
cp "$R/tokenizer.model" "$R/tokenizer_config.json" "$R/chat_template.jinja" "$CK/"
/usr/bin/python3 "$R/check_against_engine.py" --convert "$BUILD/app/qwenchat-convert" \
  --cli "$BUILD/app/qwenchat-cli" --spm "$R/tokenizer.model" --checkpoint "$CK" --tokens 48 \
  --docs "$R/eval/chat_sample.jsonl" --n-docs 100
"$BUILD/app/qwenchat-convert" "$CK" assets/qwenchat-default.gguf --outtype q8_0 \
  --name qwenchat-default
/usr/bin/python3 "$R/evaluate.py" --cli "$BUILD/app/qwenchat-cli" --model assets/qwenchat-default.gguf \
  --data "$DATA" --out "$R/metrics-cpu.json" --backend cpu ${EVAL_ARGS:-}
