#!/bin/bash
# One-shot set-up of the demo Gitea for docker-compose.yml. It runs in the
# gitea/gitea image with Gitea's /data volume mounted, and is idempotent:
#   1. waits for Gitea to answer;
#   2. creates the admin user (gitea CLI, against the shared app.ini);
#   3. creates an access token unless the one in $TOKEN_FILE still works,
#      and writes it there for CommiTea (GITEA_TOKEN_FILE);
#   4. creates the repository $ADMIN_USER/$REPO if missing;
#   5. creates or updates its webhook to $WEBHOOK_URL with the shared secret.
# The image has curl but no jq: JSON is read with sed.
set -euo pipefail

: "${GITEA_URL:=http://gitea:3000}"
: "${ADMIN_USER:=commitea-admin}"
: "${ADMIN_PASSWORD:=commitea-admin-password}"
: "${ADMIN_EMAIL:=commitea-admin@example.com}"
: "${REPO:=demo}"
: "${WEBHOOK_URL:=http://commitea:8080/webhooks/gitea}"
: "${TOKEN_FILE:=/shared/gitea-token}"
: "${TOKEN_OWNER_UID:=65532}" # distroless "nonroot", the user CommiTea runs as
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
	new=$(printf '%s' "$resp" | sed -n 's/.*"sha1":"\([^"]*\)".*/\1/p')
	[ -n "$new" ] || { log "token: no sha1 in $resp"; exit 1; }
	umask 077
	printf '%s\n' "$new" >"$TOKEN_FILE.tmp"
	chown "$TOKEN_OWNER_UID:$TOKEN_OWNER_UID" "$TOKEN_FILE.tmp"
	mv "$TOKEN_FILE.tmp" "$TOKEN_FILE"
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
hooks=$resp
# One hook per line, each starting with its id.
id=$(printf '%s' "$hooks" | sed 's/{"id":/\
/g' | grep -F "\"url\":\"$WEBHOOK_URL\"" | sed -n '1s/^\([0-9]*\).*/\1/p' || true)
if [ -n "$id" ]; then
	api PATCH "/repos/$ADMIN_USER/$REPO/hooks/$id" "$hook"
	[ "$status" = 200 ] || { log "update hook $id: HTTP $status: $resp"; exit 1; }
	log "updated hook $id"
else
	api POST "/repos/$ADMIN_USER/$REPO/hooks" "$hook"
	[ "$status" = 201 ] || { log "create hook: HTTP $status: $resp"; exit 1; }
	log "created hook"
fi
log "done: token in $TOKEN_FILE, project $ADMIN_USER/$REPO"
