#!/usr/bin/env bash
# chat_template_agreement_jinja: render_chatml / encode_chat against chatml_jinja_template() rendered by
# @huggingface/jinja and encoded by HF tokenizers (chat_template_agreement.mjs says what is compared).
#   run_chat_agreement.sh SOURCE_DIR OUT_DIR CHAT_RENDER_DUMP
set -uo pipefail
SRC=$1
OUT=$2
DUMP=$3
# shellcheck source=npm_setup.sh
source "$SRC/tests/agreement/npm_setup.sh"
rm -rf "$OUT"
mkdir -p "$OUT"
node "$SRC/tests/agreement/chat_template_agreement.mjs" "$OUT" "$DUMP" 2>&1 | grep -v '^[[:space:]]*$'
