#!/bin/bash
# One-shot set-up of the demo Gitea for docker-compose.yml. It runs in the
# gitea/gitea image with Gitea's /data volume mounted, and is idempotent:
#   1. waits for Gitea to answer;
#   2. creates the admin user (gitea CLI, against the shared app.ini);
#   3. creates an access token unless the one in $TOKEN_FILE still works,
#      and writes it there for CommiTea (GITEA_TOKEN_FILE);
#   4. creates the repository $ADMIN_USER/$REPO if missing;
#   5. creates or updates its webhook to $WEBHOOK_URL with the shared secret;
#   6. registers CommiTea as an OAuth2 application ("Sign in with Gitea")
#      with the redirect URI $PUBLIC_URL/auth/callback, unless the one whose
#      id and secret are in $OAUTH_CLIENT_ID_FILE and $OAUTH_CLIENT_SECRET_FILE
#      is current, and writes them there for CommiTea (GITEA_OAUTH_CLIENT_*_FILE).
# The image has curl but no jq: JSON is read with sed, one object per line
# (split at "},{"), each field looked for wherever it sits in the object.
set -euo pipefail

: "${GITEA_URL:=http://gitea:3000}"
: "${ADMIN_USER:=commitea-admin}"
: "${ADMIN_PASSWORD:=commitea-admin-password}"
: "${ADMIN_EMAIL:=commitea-admin@example.com}"
: "${REPO:=demo}"
: "${WEBHOOK_URL:=http://commitea:8080/webhooks/gitea}"
: "${TOKEN_FILE:=/shared/gitea-token}"
: "${TOKEN_OWNER_UID:=65532}" # distroless "nonroot", the user CommiTea runs as
: "${TOKEN_OWNER_GID:=$TOKEN_OWNER_UID}"
: "${PUBLIC_URL:=http://localhost:8080}" # CommiTea as browsers reach it
: "${OAUTH_APP_NAME:=CommiTea}"
: "${OAUTH_CLIENT_ID_FILE:=/shared/gitea-oauth-client-id}"
: "${OAUTH_CLIENT_SECRET_FILE:=/shared/gitea-oauth-client-secret}"
: "${COMMITEA_WEBHOOK_SECRET:?COMMITEA_WEBHOOK_SECRET must be set}"
API="$GITEA_URL/api/v1"

log() { echo "init: $*" >&2; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# api METHOD PATH [BODY] calls the Gitea API and sets $status and $resp. It
# authenticates as the admin with basic auth, or with $token when
# use_token=1 (only to check that a stored token still works).
api() {
	local method=$1 path=$2 data=${3:-}
	local -a args=(-sS -X "$method" -H 'Content-Type: application/json' -o "$tmp" -w '%{http_code}')
	if [ "${use_token:-0}" = 1 ]; then
		args+=(-H "Authorization: token $token")
	else
		args+=(-u "$ADMIN_USER:$ADMIN_PASSWORD")
	fi
	if [ -n "$data" ]; then args+=(--data "$data"); fi
	status=$(curl "${args[@]}" "$API$path") || status=000
	resp=$(cat "$tmp")
}

# objects prints a JSON array's objects one per line (they hold no nested
# arrays of objects here); str NAME and num NAME read a field of one line.
objects() { printf '%s' "$1" | sed 's/^\[//; s/\]$//; s/},{/}\
{/g'; }
str() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
num() { sed -n "s/.*[{,]\"$1\":\([0-9][0-9]*\).*/\1/p"; }

# write_secret FILE VALUE writes VALUE to FILE readable by CommiTea only,
# replacing it in one step.
write_secret() {
	(umask 077 && printf '%s\n' "$2" >"$1.tmp")
	chown "$TOKEN_OWNER_UID:$TOKEN_OWNER_GID" "$1.tmp"
	mv "$1.tmp" "$1"
}

log "waiting for $GITEA_URL"
for i in $(seq 1 60); do
	curl -fsS "$GITEA_URL/api/healthz" >/dev/null 2>&1 && break
	[ "$i" = 60 ] && { log "Gitea did not come up"; exit 1; }
	sleep 2
done

log "admin user $ADMIN_USER"
if ! out=$(su-exec git gitea admin user create --admin --username "$ADMIN_USER" \
	--password "$ADMIN_PASSWORD" --email "$ADMIN_EMAIL" --must-change-password=false 2>&1); then
	case "$out" in
	*"already exists"*) log "already exists" ;;
	*) log "$out"; exit 1 ;;
	esac
fi

token=""
if [ -s "$TOKEN_FILE" ]; then
	token=$(cat "$TOKEN_FILE")
	use_token=1 api GET /user
	if [ "$status" != 200 ]; then
		log "stored token rejected ($status); creating a new one"
		token=""
	fi
fi
if [ -z "$token" ]; then
	log "creating access token"
	api POST "/users/$ADMIN_USER/tokens" \
		"{\"name\":\"commitea-$(date +%s)\",\"scopes\":[\"write:issue\",\"write:repository\",\"read:user\"]}"
	[ "$status" = 201 ] || { log "token: HTTP $status: $resp"; exit 1; }
	new=$(printf '%s' "$resp" | str sha1)
	[ -n "$new" ] || { log "token: no sha1 in $resp"; exit 1; }
	write_secret "$TOKEN_FILE" "$new"
	token=$new
fi

log "repository $ADMIN_USER/$REPO"
api GET "/repos/$ADMIN_USER/$REPO"
if [ "$status" = 404 ]; then
	api POST /user/repos "{\"name\":\"$REPO\",\"auto_init\":true,\"default_branch\":\"main\"}"
	[ "$status" = 201 ] || { log "create repo: HTTP $status: $resp"; exit 1; }
elif [ "$status" != 200 ]; then
	log "get repo: HTTP $status"; exit 1
fi

log "webhook to $WEBHOOK_URL"
hook="{\"type\":\"gitea\",\"active\":true,\"branch_filter\":\"*\",
\"events\":[\"issues\",\"issue_comment\",\"pull_request\"],
\"config\":{\"url\":\"$WEBHOOK_URL\",\"content_type\":\"json\",\"http_method\":\"post\",\"secret\":\"$COMMITEA_WEBHOOK_SECRET\"}}"
api GET "/repos/$ADMIN_USER/$REPO/hooks"
[ "$status" = 200 ] || { log "list hooks: HTTP $status: $resp"; exit 1; }
id=$(objects "$resp" | grep -F "\"url\":\"$WEBHOOK_URL\"" | head -n 1 | num id || true)
if [ -n "$id" ]; then
	api PATCH "/repos/$ADMIN_USER/$REPO/hooks/$id" "$hook"
	[ "$status" = 200 ] || { log "update hook $id: HTTP $status: $resp"; exit 1; }
	log "updated hook $id"
else
	api POST "/repos/$ADMIN_USER/$REPO/hooks" "$hook"
	[ "$status" = 201 ] || { log "create hook: HTTP $status: $resp"; exit 1; }
	log "created hook"
fi
redirect="$PUBLIC_URL/auth/callback"
log "OAuth2 application $OAUTH_APP_NAME for $redirect"
app="{\"name\":\"$OAUTH_APP_NAME\",\"redirect_uris\":[\"$redirect\"],\"confidential_client\":true}"
api GET /user/applications/oauth2
[ "$status" = 200 ] || { log "list OAuth2 applications: HTTP $status: $resp"; exit 1; }
line=$(objects "$resp" | grep -F "\"name\":\"$OAUTH_APP_NAME\"" | head -n 1 || true)
app_id=$(printf '%s' "$line" | num id)
client_id=$(printf '%s' "$line" | str client_id)
if [ -n "$app_id" ] && [ -s "$OAUTH_CLIENT_SECRET_FILE" ] && [ "$(cat "$OAUTH_CLIENT_ID_FILE" 2>/dev/null)" = "$client_id" ] &&
	printf '%s' "$line" | grep -qF "\"redirect_uris\":[\"$redirect\"]"; then
	log "application $app_id is current"
else
	# Gitea shows a secret only when it makes one: on create, and on
	# PATCH, which makes a new one. A lost secret file costs a new secret.
	if [ -n "$app_id" ]; then
		api PATCH "/user/applications/oauth2/$app_id" "$app"
		want=200
	else
		api POST /user/applications/oauth2 "$app"
		want=201
	fi
	[ "$status" = "$want" ] || { log "OAuth2 application: HTTP $status: $resp"; exit 1; }
	client_id=$(printf '%s' "$resp" | str client_id)
	client_secret=$(printf '%s' "$resp" | str client_secret)
	[ -n "$client_id" ] && [ -n "$client_secret" ] || { log "OAuth2 application: no client id or secret in the answer"; exit 1; }
	write_secret "$OAUTH_CLIENT_ID_FILE" "$client_id"
	write_secret "$OAUTH_CLIENT_SECRET_FILE" "$client_secret"
	log "application ${app_id:-created}: client id and secret in $OAUTH_CLIENT_ID_FILE, $OAUTH_CLIENT_SECRET_FILE"
fi
log "done: token in $TOKEN_FILE, project $ADMIN_USER/$REPO, sign-in at $PUBLIC_URL/dashboard/"
