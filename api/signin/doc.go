// Package signin lets people reach CommiTea's pages (the dashboard and the
// River UI) with their Gitea account, and decides what each of them may see
// there from their permissions in Gitea. It is the api package's browser
// auth layer; agents and the CLI keep to bearer tokens, and no cookie of
// this package ever authorises a tool call (/v1/* and /mcp read the
// Authorization header only).
//
// Sign-in is OAuth2's authorization code flow against Gitea, an OAuth2
// provider, with golang.org/x/oauth2:
//   - GET /auth/login?next=PATH makes a random state and a PKCE verifier,
//     keeps the verifier and PATH in Postgres under the state's hash (so
//     any replica can finish the sign-in), puts the state in a short-lived
//     cookie bound to /auth/, and redirects to Gitea's
//     /login/oauth/authorize with the S256 challenge and scope read:user
//     (Gitea 1.22+ then limits the token to reading the user).
//   - GET /auth/callback refuses unless the state in the address equals the
//     cookie's (a sign-in started in another browser, or forged, fails) and
//     the stored sign-in is under 10 minutes old and unused; it exchanges
//     the code with the verifier (a code stolen from another sign-in fails
//     Gitea's PKCE check), reads /api/v1/user with the person's token, then
//     forgets the token: nothing later acts as the person in Gitea.
//   - POST /auth/logout revokes the session. A cross-site form cannot log
//     anyone out, since the cookie is SameSite=Lax.
//
// Requests that change something (the River UI's retry and cancel, sign-out)
// with a session must also carry the public URL's Origin (SameOrigin):
// Lax lets a sibling host of the same site through, this does not.
//
// Sessions live in Postgres (table web_sessions), so they survive restarts
// and are shared by replicas. The cookie holds 32 random bytes; the table
// keeps their SHA-256. A session ends 12 hours after its last use or 7
// days after sign-in, whichever is first (sessions.idle_timeout and
// sessions.max_age), or when revoked (logout, `commitea sessions revoke`).
// Use moves the idle expiry on at most once a minute, so a page view is
// not a write. Cookies are HttpOnly, SameSite=Lax, Path=/, and Secure when
// server.public_url is https.
//
// Permissions come from Gitea, read with CommiTea's own token through the
// collaborator-permission endpoint (organisation and team grants arrive
// through it too), for each configured project, at sign-in and again when
// a request finds them older than sessions.permission_refresh (10 minutes):
//
//	Gitea access mode   CommiTea scope on that project
//	read                read
//	write               write
//	admin, owner        approve
//	none                nothing; a public repository still gives read
//
// A project without read is invisible: its pages answer 404, as for a
// project that does not exist, and the index does not list it. The River
// UI shows every project's jobs and can retry and cancel them, so it needs
// approve on every configured project. When Gitea cannot be asked at
// refresh, the permissions read last keep working for one more interval
// (Gitea may be restarting); after that the session's pages answer 503
// until Gitea answers. Gitea answers others' permissions only to a site
// admin or a repository admin: when CommiTea's token is neither, the
// endpoint refuses, and only public repositories are readable.
package signin
