#!/usr/bin/env bash
# Exercises the test OpenID provider (provider.mjs) with curl.
# Usage: bash tests/oidc/check.sh   (from anywhere)
# Last line: "N passed, M failed"; exit status non-zero on any failure.

set -u -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $1${2:+ ($2)}"; }
# check NAME COMMAND...: passes when COMMAND succeeds
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# expect NAME ACTUAL WANTED
expect() { if [[ "$2" == "$3" ]]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
finish() {
  echo "$PASSED passed, $FAILED failed"
  [[ $FAILED -eq 0 ]]
  exit
}

for tool in node npm curl; do
  if ! command -v "$tool" > /dev/null; then
    not_ok "$tool is installed"
    finish
  fi
done

if [[ ! -d node_modules/oidc-provider ]]; then
  if ! npm ci --no-audit --no-fund > /dev/null; then
    not_ok "npm ci"
    finish
  fi
fi

TMP=$(mktemp -d)
PIDS=()
FDS=()
cleanup() {
  local fd pid
  for fd in "${FDS[@]}"; do exec {fd}>&-; done # closing stdin stops a provider
  for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# start_provider NAME [VAR=value...]: starts provider.mjs, sets ISSUER.
# Its stdin is a FIFO held open by this shell, so it also ends with the shell.
start_provider() {
  local name=$1 fd pid line= i
  shift
  mkfifo "$TMP/$name.stdin"
  : > "$TMP/$name.stdout"
  (
    # close the other providers' stdin FIFOs, or they would outlive their shell
    for fd in "${FDS[@]}"; do exec {fd}>&-; done
    exec env "$@" node provider.mjs < "$TMP/$name.stdin" > "$TMP/$name.stdout" 2> "$TMP/$name.stderr"
  ) &
  pid=$!
  PIDS+=("$pid")
  exec {fd}> "$TMP/$name.stdin"
  FDS+=("$fd")
  ISSUER=
  for ((i = 0; i < 300; i++)); do
    IFS= read -r line < "$TMP/$name.stdout" || true
    if [[ $line == "listening on http://127.0.0.1:"* ]]; then
      ISSUER=${line#listening on }
      return 0
    fi
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  echo "provider $name did not start; stderr:" >&2
  cat "$TMP/$name.stderr" >&2
  return 1
}

# req CURL-ARGS...: sets STATUS, BODY, LOCATION (never follows redirects)
req() {
  STATUS=$(curl -sS -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$@") || STATUS=000
  BODY=$(cat "$TMP/body")
  LOCATION=$(tr -d '\r' < "$TMP/headers" | sed -n 's/^[Ll]ocation: //p' | tail -n 1)
}
header() { tr -d '\r' < "$TMP/headers" | sed -n "s/^$1: //Ip" | tail -n 1; }

# field NAME: a top-level string, number or boolean member of the JSON in $BODY
# (oidc-provider answers compact JSON without escaped quotes in these values)
field() {
  local re="\"$1\":(\"([^\"]*)\"|(-?[0-9.]+|true|false))"
  if [[ $BODY =~ $re ]]; then echo "${BASH_REMATCH[2]}${BASH_REMATCH[3]}"; fi
}
# json EXPR: evaluates a JS expression on the JSON in $BODY (bound to `j`)
json() {
  node -e 'let j; try { j = JSON.parse(process.argv[1]); } catch { process.exit(0); }
    const v = eval(process.argv[2]);
    if (v !== undefined && v !== null) console.log(typeof v === "object" ? JSON.stringify(v) : String(v));' \
    "$BODY" "$1"
}
# query URL NAME: one query parameter of an URL
query() { node -e 'console.log(new URL(process.argv[1]).searchParams.get(process.argv[2]) ?? "")' "$1" "$2"; }

introspect() { # introspect TOKEN: active flag, sub and client_id, as "true ada pw"
  local saved=$BODY
  req -u rs:rs-secret -d "token=$1" "$ISSUER/token/introspection"
  local sub client
  sub=$(field sub)
  client=$(field client_id)
  echo "$(field active) ${sub:--} ${client:--}"
  BODY=$saved
}

if ! start_provider main; then
  not_ok "provider starts and prints its address"
  finish
fi
ok "provider starts and prints its address ($ISSUER)"
expect "provider prints exactly one stdout line" "$(wc -l < "$TMP/main.stdout" | tr -d ' ')" 1

# ---------------------------------------------------------------- discovery
req "$ISSUER/.well-known/openid-configuration"
expect "discovery answers 200" "$STATUS" 200
expect "discovery issuer" "$(field issuer)" "$ISSUER"
expect "discovery token_endpoint" "$(field token_endpoint)" "$ISSUER/token"
expect "discovery authorization_endpoint" "$(field authorization_endpoint)" "$ISSUER/auth"
expect "discovery device_authorization_endpoint" "$(field device_authorization_endpoint)" "$ISSUER/device/auth"
expect "discovery introspection_endpoint" "$(field introspection_endpoint)" "$ISSUER/token/introspection"
expect "discovery lists the grants" \
  "$(json '["client_credentials","password","refresh_token","authorization_code","urn:ietf:params:oauth:grant-type:device_code"].every((g) => j.grant_types_supported.includes(g))')" true

req -X POST "$ISSUER/test/stats/reset"
expect "stats reset answers 200" "$STATUS" 200

# ---------------------------------------------------------------- client_credentials
req -u cc-basic:cc-basic-secret -d grant_type=client_credentials -d 'scope=api:read api:write' "$ISSUER/token"
expect "client_credentials (basic) answers 200" "$STATUS" 200
expect "client_credentials (basic) token_type" "$(field token_type)" Bearer
expect "client_credentials (basic) expires_in" "$(field expires_in)" 3600
expect "client_credentials (basic) scope" "$(field scope)" "api:read api:write"
CC_TOKEN=$(field access_token)
check "client_credentials (basic) access_token" test -n "$CC_TOKEN"
expect "client_credentials token is active at introspection" "$(introspect "$CC_TOKEN")" "true - cc-basic"

req -u cc-basic:wrong -d grant_type=client_credentials "$ISSUER/token"
expect "client_credentials wrong secret is invalid_client" "$STATUS $(field error)" "401 invalid_client"
req -u cc-basic:cc-basic-secret -d grant_type=client_credentials -d scope=openid "$ISSUER/token"
expect "client_credentials scope outside the client's is invalid_scope" "$STATUS $(field error)" "400 invalid_scope"

req -d grant_type=client_credentials -d client_id=cc-post -d client_secret=cc-post-secret -d scope=api:read "$ISSUER/token"
expect "client_credentials (post) answers 200" "$STATUS" 200
expect "client_credentials (post) scope" "$(field scope)" api:read
check "client_credentials (post) access_token" test -n "$(field access_token)"
req -u cc-post:cc-post-secret -d grant_type=client_credentials "$ISSUER/token"
expect "client_credentials (post) client refuses basic auth" "$STATUS $(field error)" "401 invalid_client"
req -d grant_type=client_credentials -d client_id=cc-basic -d client_secret=cc-basic-secret "$ISSUER/token"
expect "client_credentials (basic) client refuses a secret in the body" "$STATUS $(field error)" "401 invalid_client"

# ---------------------------------------------------------------- password grant + refresh
req -u pw:pw-secret -d grant_type=password -d username=ada -d password=lovelace "$ISSUER/token"
expect "password grant answers 200" "$STATUS" 200
expect "password grant token_type" "$(field token_type)" Bearer
expect "password grant expires_in" "$(field expires_in)" 3600
expect "password grant default scope" "$(field scope)" "api:read api:write"
PW_ACCESS=$(field access_token)
PW_REFRESH=$(field refresh_token)
check "password grant access_token" test -n "$PW_ACCESS"
check "password grant refresh_token" test -n "$PW_REFRESH"
expect "password grant token introspects as ada" "$(introspect "$PW_ACCESS")" "true ada pw"

req -u pw:pw-secret -d grant_type=password -d username=ada -d password=wrong "$ISSUER/token"
expect "password grant wrong password answers 400" "$STATUS" 400
expect "password grant wrong password is invalid_grant" "$(field error)" invalid_grant
check "password grant wrong password has error_description" test -n "$(field error_description)"
expect "password grant error is JSON" "$(header content-type)" "application/json; charset=utf-8"
req -u pw:pw-secret -d grant_type=password -d username=nobody -d password=lovelace "$ISSUER/token"
expect "password grant unknown user is invalid_grant" "$STATUS $(field error)" "400 invalid_grant"
req -u pw:pw-secret -d grant_type=password -d username=ada "$ISSUER/token"
expect "password grant without password is invalid_request" "$STATUS $(field error)" "400 invalid_request"

req -d grant_type=password -d client_id=pw-post -d client_secret=pw-post-secret \
  -d username=grace -d password=hopper -d scope=api:read "$ISSUER/token"
expect "password grant (post) answers 200" "$STATUS" 200
expect "password grant (post) scope" "$(field scope)" api:read
PW_POST_REFRESH=$(field refresh_token)
expect "password grant (post) token introspects as grace" "$(introspect "$(field access_token)")" "true grace pw-post"

req -u pw:pw-secret -d grant_type=refresh_token -d "refresh_token=$PW_REFRESH" "$ISSUER/token"
expect "refresh (password grant token) answers 200" "$STATUS" 200
REFRESHED=$(field access_token)
check "refresh gives a new access token" test -n "$REFRESHED" -a "$REFRESHED" != "$PW_ACCESS"
expect "refresh keeps the scope" "$(field scope)" "api:read api:write"
expect "refresh expires_in" "$(field expires_in)" 3600
check "refresh answers a refresh_token" test -n "$(field refresh_token)"
expect "refreshed token introspects as ada" "$(introspect "$REFRESHED")" "true ada pw"

req -d grant_type=refresh_token -d client_id=pw-post -d client_secret=pw-post-secret -d "refresh_token=$PW_POST_REFRESH" "$ISSUER/token"
expect "refresh (post client) answers 200" "$STATUS" 200
req -u pw:pw-secret -d grant_type=refresh_token -d "refresh_token=$PW_POST_REFRESH" "$ISSUER/token"
expect "refresh with another client's token is invalid_grant" "$STATUS $(field error)" "400 invalid_grant"
req -u pw:pw-secret -d grant_type=refresh_token -d refresh_token=bogus "$ISSUER/token"
expect "refresh with an unknown token is invalid_grant" "$STATUS $(field error)" "400 invalid_grant"

# ---------------------------------------------------------------- authorization code + PKCE (code-public)
read -r VERIFIER CHALLENGE < <(node -e '
  const c = require("node:crypto");
  const v = c.randomBytes(32).toString("base64url");
  console.log(v, c.createHash("sha256").update(v).digest("base64url"));')
REDIRECT="http://127.0.0.1:53682/callback" # any loopback port; nothing listens there
JAR="$TMP/cookies"

req -c "$JAR" -b "$JAR" -G "$ISSUER/auth" --data-urlencode client_id=code-public --data-urlencode response_type=code \
  --data-urlencode "redirect_uri=$REDIRECT" --data-urlencode 'scope=openid offline_access api:read' \
  --data-urlencode state=st4te --data-urlencode "code_challenge=$CHALLENGE" --data-urlencode code_challenge_method=S256
expect "authorization request redirects to the interaction" "$STATUS $(echo "$LOCATION" | cut -d/ -f2)" "303 interaction"
INTERACTION=$LOCATION
req -c "$JAR" -b "$JAR" "$ISSUER$INTERACTION"
expect "interaction page answers 200" "$STATUS" 200
check "interaction page asks for login" grep -q 'data-prompt="login"' "$TMP/body"
req -c "$JAR" -b "$JAR" "$ISSUER$INTERACTION/login?user=ada&password=wrong"
expect "interaction login with a wrong password answers 401" "$STATUS" 401
req -c "$JAR" -b "$JAR" -d user=ada -d password=lovelace "$ISSUER$INTERACTION/login"
expect "interaction login redirects to the authorization resume" "$STATUS ${LOCATION%/*}" "303 $ISSUER/auth"
req -c "$JAR" -b "$JAR" "$LOCATION"
expect "resume redirects to the client's loopback redirect URI" "$STATUS ${LOCATION%%\?*}" "303 $REDIRECT"
CODE=$(query "$LOCATION" code)
check "redirect carries a code" test -n "$CODE"
expect "redirect carries the state" "$(query "$LOCATION" state)" st4te
expect "redirect carries iss" "$(query "$LOCATION" iss)" "$ISSUER"

req -d grant_type=authorization_code -d client_id=code-public -d "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT" -d "code_verifier=${VERIFIER}x" "$ISSUER/token"
expect "code exchange with a wrong verifier is invalid_grant" "$STATUS $(field error)" "400 invalid_grant"

# a fresh code: the cookie jar now holds ada's session, so only consent is asked for
req -c "$JAR" -b "$JAR" -G "$ISSUER/auth" --data-urlencode client_id=code-public --data-urlencode response_type=code \
  --data-urlencode "redirect_uri=$REDIRECT" --data-urlencode 'scope=openid offline_access api:read' \
  --data-urlencode state=second --data-urlencode "code_challenge=$CHALLENGE" --data-urlencode code_challenge_method=S256
expect "second authorization (signed in) goes to consent" "$STATUS $(echo "$LOCATION" | cut -d/ -f2)" "303 interaction"
INTERACTION=$LOCATION
req -c "$JAR" -b "$JAR" "$ISSUER$INTERACTION"
check "second interaction asks for consent only" grep -q 'data-prompt="consent"' "$TMP/body"
req -c "$JAR" -b "$JAR" -X POST "$ISSUER$INTERACTION/login"
req -c "$JAR" -b "$JAR" "$LOCATION"
expect "consent redirects to the redirect URI" "$STATUS ${LOCATION%%\?*}" "303 $REDIRECT"
CODE=$(query "$LOCATION" code)
expect "second redirect carries the state" "$(query "$LOCATION" state)" second

req -d grant_type=authorization_code -d client_id=code-public -d "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT" -d "code_verifier=$VERIFIER" "$ISSUER/token"
expect "code exchange (PKCE S256) answers 200" "$STATUS" 200
CODE_ACCESS=$(field access_token)
CODE_REFRESH=$(field refresh_token)
check "code exchange gives an access_token" test -n "$CODE_ACCESS"
check "code exchange gives a refresh_token" test -n "$CODE_REFRESH"
check "code exchange gives an id_token" test -n "$(field id_token)"
expect "code exchange expires_in" "$(field expires_in)" 3600
expect "code token introspects as ada" "$(introspect "$CODE_ACCESS")" "true ada code-public"

req -d grant_type=refresh_token -d client_id=code-public -d "refresh_token=$CODE_REFRESH" "$ISSUER/token"
expect "refresh (public code client) answers 200" "$STATUS" 200
check "public client refresh rotates the refresh token" test -n "$(field refresh_token)" -a "$(field refresh_token)" != "$CODE_REFRESH"

req -G "$ISSUER/auth" --data-urlencode client_id=code-public --data-urlencode response_type=code \
  --data-urlencode "redirect_uri=$REDIRECT" --data-urlencode scope=openid --data-urlencode state=nopkce
expect "code-public without PKCE is refused at the redirect URI" "$(query "$LOCATION" error) $(query "$LOCATION" state)" "invalid_request nopkce"

# ---------------------------------------------------------------- authorization code, confidential, no cookie jar
REDIRECT2="http://127.0.0.1:40111/callback"
req -G "$ISSUER/auth" --data-urlencode client_id=code-secret --data-urlencode response_type=code \
  --data-urlencode "redirect_uri=$REDIRECT2" --data-urlencode 'scope=openid api:write' --data-urlencode state=s2
INTERACTION=$LOCATION
req "$ISSUER$INTERACTION/login?user=grace&password=hopper"
req "$LOCATION"
expect "code-secret flow without cookies reaches the redirect URI" "$STATUS ${LOCATION%%\?*}" "303 $REDIRECT2"
CODE=$(query "$LOCATION" code)
req -u code-secret:code-secret-secret -d grant_type=authorization_code -d "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT2" "$ISSUER/token"
expect "code-secret exchange (no PKCE, basic auth) answers 200" "$STATUS" 200
expect "code-secret scope" "$(field scope)" "openid api:write"
expect "code-secret token introspects as grace" "$(introspect "$(field access_token)")" "true grace code-secret"

req -G "$ISSUER/auth" --data-urlencode client_id=code-secret --data-urlencode response_type=code \
  --data-urlencode "redirect_uri=$REDIRECT2" --data-urlencode scope=openid --data-urlencode state=s3
req "$ISSUER$LOCATION/abort"
req "$LOCATION"
expect "aborted interaction redirects with access_denied" "$(query "$LOCATION" error) $(query "$LOCATION" state)" "access_denied s3"

# ---------------------------------------------------------------- device flow
DEVICE_GRANT=urn:ietf:params:oauth:grant-type:device_code
req -d client_id=device --data-urlencode 'scope=openid offline_access api:read' "$ISSUER/device/auth"
expect "device authorization answers 200" "$STATUS" 200
DEVICE_CODE=$(field device_code)
USER_CODE=$(field user_code)
check "device authorization gives device_code and user_code" test -n "$DEVICE_CODE" -a -n "$USER_CODE"
expect "device authorization verification_uri" "$(field verification_uri)" "$ISSUER/device"

req -d client_id=device -d "grant_type=$DEVICE_GRANT" -d "device_code=$DEVICE_CODE" "$ISSUER/token"
expect "device poll before approval is authorization_pending" "$STATUS $(field error)" "400 authorization_pending"
req -d "user_code=$USER_CODE" -d user=grace "$ISSUER/test/device/approve"
expect "device approval answers 200" "$STATUS $(field status)" "200 approved"
req -d "user_code=$USER_CODE" -d user=ada "$ISSUER/test/device/approve"
expect "approving an already approved user code is refused" "$STATUS $(field error)" "409 already_used"
req -d client_id=device -d "grant_type=$DEVICE_GRANT" -d "device_code=$DEVICE_CODE" "$ISSUER/token"
expect "device poll after approval answers 200" "$STATUS" 200
check "device poll gives access and refresh tokens" test -n "$(field access_token)" -a -n "$(field refresh_token)"
expect "device token introspects as grace" "$(introspect "$(field access_token)")" "true grace device"
req -d client_id=device -d "grant_type=$DEVICE_GRANT" -d "device_code=$DEVICE_CODE" "$ISSUER/token"
expect "device code cannot be used twice" "$STATUS $(field error)" "400 invalid_grant"
req -d "user_code=$USER_CODE" -d user=grace "$ISSUER/test/device/approve"
expect "approving a user code whose token was issued is refused" "$STATUS $(field error)" "404 unknown_user_code"
req -d user_code=BBBB-BBBB -d user=ada "$ISSUER/test/device/approve"
expect "approving an unknown user code is refused" "$STATUS $(field error)" "404 unknown_user_code"

req -d client_id=device -d scope=openid "$ISSUER/device/auth"
DEVICE_CODE=$(field device_code)
req -d "user_code=$(field user_code)" "$ISSUER/test/device/deny"
expect "device denial answers 200" "$STATUS $(field status)" "200 denied"
req -d client_id=device -d "grant_type=$DEVICE_GRANT" -d "device_code=$DEVICE_CODE" "$ISSUER/token"
expect "device poll after denial is access_denied" "$STATUS $(field error)" "400 access_denied"

# ---------------------------------------------------------------- stats
req -X POST "$ISSUER/test/stats/reset"
expect "stats reset zeroes the counters" "$(json 'Object.keys(j.token).length + j.deviceAuthorization')" 0
req -u cc-basic:cc-basic-secret -d grant_type=client_credentials "$ISSUER/token"
req -u cc-basic:cc-basic-secret -d grant_type=client_credentials "$ISSUER/token"
req -u pw:pw-secret -d grant_type=password -d username=ada -d password=lovelace "$ISSUER/token"
REFRESH=$(field refresh_token)
req -u pw:pw-secret -d grant_type=password -d username=ada -d password=nope "$ISSUER/token"
req -u pw:pw-secret -d grant_type=refresh_token -d "refresh_token=$REFRESH" "$ISSUER/token"
req -d client_id=device "$ISSUER/device/auth"
req -d client_id=device -d "grant_type=$DEVICE_GRANT" -d "device_code=$(field device_code)" "$ISSUER/token"
req "$ISSUER/test/stats"
expect "stats count token requests by grant_type" "$(json j.token)" \
  '{"client_credentials":2,"password":2,"refresh_token":1,"urn:ietf:params:oauth:grant-type:device_code":1}'
expect "stats count token errors by grant_type" "$(json j.tokenErrors)" \
  '{"password":1,"urn:ietf:params:oauth:grant-type:device_code":1}'
expect "stats count device authorizations" "$(json j.deviceAuthorization)" 1

# ---------------------------------------------------------------- OIDC_ACCESS_TTL
MAIN_ISSUER=$ISSUER
if start_provider short OIDC_ACCESS_TTL=2; then
  ok "provider starts with OIDC_ACCESS_TTL=2"
  check "second provider has its own port" test "$ISSUER" != "$MAIN_ISSUER"
  req -u cc-basic:cc-basic-secret -d grant_type=client_credentials "$ISSUER/token"
  expect "OIDC_ACCESS_TTL=2: client_credentials expires_in" "$(field expires_in)" 2
  SHORT_TOKEN=$(field access_token)
  req -u pw:pw-secret -d grant_type=password -d username=ada -d password=lovelace "$ISSUER/token"
  expect "OIDC_ACCESS_TTL=2: password expires_in" "$(field expires_in)" 2
  req -u pw:pw-secret -d grant_type=refresh_token -d "refresh_token=$(field refresh_token)" "$ISSUER/token"
  expect "OIDC_ACCESS_TTL=2: refresh expires_in" "$(field expires_in)" 2
  expect "OIDC_ACCESS_TTL=2: token active at first" "$(introspect "$SHORT_TOKEN")" "true - cc-basic"
  START=$SECONDS
  STATE=$(introspect "$SHORT_TOKEN")
  while [[ $STATE == true* && $((SECONDS - START)) -lt 6 ]]; do
    sleep 0.25
    STATE=$(introspect "$SHORT_TOKEN")
  done
  expect "OIDC_ACCESS_TTL=2: token inactive once expired" "$STATE" "false - -"
else
  not_ok "provider starts with OIDC_ACCESS_TTL=2"
fi
if start_provider bad OIDC_ACCESS_TTL=soon 2> /dev/null; then
  not_ok "invalid OIDC_ACCESS_TTL is refused"
else
  ok "invalid OIDC_ACCESS_TTL is refused"
fi

# ---------------------------------------------------------------- lifetime
PID=${PIDS[0]}
FD=${FDS[0]}
exec {FD}>&-
for ((i = 0; i < 100; i++)); do kill -0 "$PID" 2> /dev/null || break; sleep 0.05; done
check "provider exits when its stdin closes" bash -c "! kill -0 $PID 2> /dev/null"
FDS=("${FDS[@]:1}")

if start_provider term; then
  PID=${PIDS[-1]}
  kill -TERM "$PID"
  for ((i = 0; i < 100; i++)); do kill -0 "$PID" 2> /dev/null || break; sleep 0.05; done
  check "provider exits on SIGTERM" bash -c "! kill -0 $PID 2> /dev/null"
else
  not_ok "provider exits on SIGTERM" "did not start"
fi

for f in "$TMP"/*.stdout; do
  lines=$(wc -l < "$f" | tr -d ' ')
  [[ $(basename "$f") == bad.stdout ]] && continue
  if [[ $lines != 1 ]]; then not_ok "only the listening line on stdout of $(basename "$f" .stdout)" "$lines lines"; fi
done

finish
