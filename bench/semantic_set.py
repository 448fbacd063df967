# ruff: noqa: E501 - data: one line per turn reads better than wrapped strings
"""A labelled set for recall by meaning: conversations, distractors and queries.

Each target conversation (``c..``) is the kind of exchange a person has with a
coding agent; each query is how that person might look for it weeks later, in
other words than the conversation used. Distractors (``d..``) share the
vocabulary of the queries (the same tools, files and nouns) but are about
something else, so a bag of words cannot win on them. ``PHRASES`` are exact
phrases copied from conversations: hybrid search must rank their conversation
first. ``bench/semantic_eval.py`` builds a home from this file and scores the
three modes; written by hand for agentdex (issue 20), not taken from anywhere.
"""

from __future__ import annotations

U, A = "user", "assistant"

#: id -> (project folder, day of 2026-10, turns)
CONVERSATIONS: dict[str, tuple[str, int, list[tuple[str, str]]]] = {
    "c01": (
        "api-gateway",
        3,
        [
            (
                U,
                "The billing sync job keeps failing overnight with HTTP 429 from the payments provider. Can you look at client.py?",
            ),
            (
                A,
                "The provider returns 429 Too Many Requests with a Retry-After header and we retry immediately in a tight loop. I added exponential backoff with jitter, honour Retry-After when present, and capped retries at 5.",
            ),
            (U, "Also make the batch size smaller so we send fewer calls per minute."),
            (
                A,
                "Done: batches of 50 instead of 500, and a token bucket of 10 calls per second shared by the workers.",
            ),
        ],
    ),
    "c02": (
        "orders-service",
        5,
        [
            (
                U,
                "Deploy hung for 20 minutes on the migration that adds `fulfilled_at` with a default to the orders table, and checkout requests timed out meanwhile.",
            ),
            (
                A,
                "ALTER TABLE ... ADD COLUMN with a volatile default rewrites the whole table under an ACCESS EXCLUSIVE lock on this Postgres version. I split it: add the column nullable, backfill in batches of 10k rows, then set the default, and set lock_timeout = '5s' in the migration.",
            ),
        ],
    ),
    "c03": (
        "scheduler",
        6,
        [
            (
                U,
                "test_next_run_time passes locally but fails in CI about twice a year, and today it fails for everyone.",
            ),
            (
                A,
                "The test builds 'tomorrow at 02:30' in Europe/Berlin; on the day clocks jump forward that local time does not exist, so the expected value is off by an hour. I pinned the test clock with freezegun and used zoneinfo-aware arithmetic instead of adding 86400 seconds.",
            ),
        ],
    ),
    "c04": (
        "web-frontend",
        7,
        [
            (U, "Our container image is 2.3 GB and pulls take forever on the build agents."),
            (
                A,
                "The final stage still has node_modules with dev dependencies, the whole .git folder and the apt cache. I switched to a multi-stage build: build in node:20, copy only dist/ into nginx:alpine, added a .dockerignore. The image is now 48 MB.",
            ),
        ],
    ),
    "c05": (
        "realtime-hub",
        8,
        [
            (
                U,
                "After a day of running, the hub prints MaxListenersExceededWarning and its RSS keeps climbing until it restarts.",
            ),
            (
                A,
                "Every reconnect calls socket.on('message', handler) again without removing the old handler, so handlers pile up and keep the old sessions alive. I register the listener once and call removeListener in the close path; heap snapshots are flat now.",
            ),
        ],
    ),
    "c06": (
        "admin-panel",
        9,
        [
            (
                U,
                "Saving a user from the admin UI fails in the browser but the same PUT works from curl.",
            ),
            (
                A,
                "The browser sends an OPTIONS preflight because of the X-Tenant-Id header and the PUT method; the API answers the preflight with 404. I added the OPTIONS route and Access-Control-Allow-Methods/Headers for the admin origin.",
            ),
        ],
    ),
    "c07": (
        "web-frontend",
        10,
        [
            (U, "git rebase main stops with conflicts in package-lock.json, hundreds of them."),
            (
                A,
                "Don't resolve a lockfile by hand. Take main's version (git checkout --theirs package-lock.json during the rebase), run npm install to regenerate it with your package.json changes, git add it and continue the rebase.",
            ),
        ],
    ),
    "c08": (
        "crawler",
        11,
        [
            (U, "The crawler freezes after a few pages; no error, CPU at zero."),
            (
                A,
                "fetch_page calls requests.get inside an async def, which blocks the event loop; with the semaphore held, every other task waits forever. I replaced it with httpx.AsyncClient and added a timeout, so the loop never blocks on network I/O.",
            ),
        ],
    ),
    "c09": (
        "dashboard",
        12,
        [
            (U, "The settings page makes hundreds of API calls per second and the fan spins up."),
            (
                A,
                "useEffect depends on `options`, an object literal created on every render, so the effect runs, sets state, re-renders, and runs again forever. I memoized options with useMemo and depend on its primitive fields.",
            ),
        ],
    ),
    "c10": (
        "deploy-tools",
        13,
        [
            (U, "pip install fails at work with CERTIFICATE_VERIFY_FAILED but at home it works."),
            (
                A,
                "The office network intercepts TLS with its own root CA. Point pip and requests at the company bundle: REQUESTS_CA_BUNDLE and PIP_CERT to /etc/ssl/certs/corp-root.pem; don't disable verification.",
            ),
        ],
    ),
    "c11": (
        "orders-service",
        14,
        [
            (U, "The worker pod restarts every few minutes, status CrashLoopBackOff."),
            (
                A,
                "kubectl describe shows Last State: Terminated, Reason: OOMKilled. The limit is 256Mi while the worker loads the whole product catalogue. I raised the limit to 768Mi and made the loader stream the catalogue in pages.",
            ),
        ],
    ),
    "c12": (
        "reporting",
        15,
        [
            (U, "The invoices list endpoint takes 9 seconds for big customers."),
            (
                A,
                "EXPLAIN ANALYZE shows a sequential scan over 40M rows filtering on customer_id and sorting by created_at. A composite index on (customer_id, created_at DESC) turns it into an index scan: 12 ms.",
            ),
        ],
    ),
    "c13": (
        "file-sync",
        16,
        [
            (U, "Files named like café.txt uploaded from Macs show up twice on the server."),
            (
                A,
                "macOS gives the name in decomposed form (NFD) and Linux clients in composed form (NFC), so the byte strings differ. I normalize every path to NFC with unicodedata.normalize before comparing and storing.",
            ),
        ],
    ),
    "c14": (
        "auth-service",
        17,
        [
            (U, "Some users get 401 right after logging in, only on one of the servers."),
            (
                A,
                "That host's clock is 3 minutes behind, so freshly issued tokens look not-yet-valid (iat/nbf in the future). I enabled NTP on it and allowed 30 seconds of leeway when verifying the JWT.",
            ),
        ],
    ),
    "c15": (
        "billing",
        18,
        [
            (U, "Customers got the monthly invoice email twice this morning."),
            (
                A,
                "The cron schedule runs inside the app, and since we scaled to two replicas both fire at 06:00. I moved it behind a Postgres advisory lock so only one replica runs the job; the other skips.",
            ),
        ],
    ),
    "c16": (
        "importer",
        19,
        [
            (
                U,
                "Importing the supplier's spreadsheet export says column 'sku' is missing, but it is clearly the first column.",
            ),
            (
                A,
                "The file starts with a UTF-8 byte order mark, so the first header is '\\ufeffsku'. Opening it with encoding='utf-8-sig' strips the BOM and the header matches.",
            ),
        ],
    ),
    "c17": (
        "proxy",
        20,
        [
            (U, "The proxy's goroutine count grows from 200 to 50k over a week."),
            (
                A,
                "Each upstream call starts a goroutine that waits on a channel nobody reads once the client disconnects. I pass the request context down and select on ctx.Done(), so they exit when the request is cancelled; pprof shows the count stable.",
            ),
        ],
    ),
    "c18": (
        "infra",
        21,
        [
            (
                U,
                "terraform plan says Error acquiring the state lock, and nobody is running anything.",
            ),
            (
                A,
                "A CI job was killed mid-apply and left its lock in the DynamoDB table. After checking no apply is running, terraform force-unlock with the lock ID from the error clears it.",
            ),
        ],
    ),
    "c19": (
        "web-frontend",
        22,
        [
            (
                U,
                "npm run build dies with 'JavaScript heap out of memory' since we added the charts library.",
            ),
            (
                A,
                "The production build with source maps needs more than the default heap. NODE_OPTIONS=--max-old-space-size=4096 fixes the build; I also lazy-load the charts bundle so the main chunk shrinks.",
            ),
        ],
    ),
    "c20": (
        "catalog-api",
        23,
        [
            (U, "Exporting all products through the API returns 9,980 items but there are 10,000."),
            (
                A,
                "The cursor is the last item's id, and the next page uses `id >= cursor` after skipping one, but items with equal sort keys on the boundary are skipped. I made the cursor (updated_at, id) and use a strict tuple comparison.",
            ),
        ],
    ),
    "c21": (
        "config-store",
        24,
        [
            (U, "Sometimes settings.json is empty after the app is killed during a save."),
            (
                A,
                "We truncate the file and then write it, so a crash in between leaves it empty. Now we write to settings.json.tmp, fsync, and os.replace it over the old file, which is atomic.",
            ),
        ],
    ),
    "c22": (
        "dashboard",
        25,
        [
            (U, "In dark mode the page flashes white for a split second on every load."),
            (
                A,
                "The theme class is applied by React after hydration, so the first paint uses the light variables. A small inline script in <head> reads the saved theme and sets data-theme before the CSS paints.",
            ),
        ],
    ),
    "c23": (
        "cli-rs",
        26,
        [
            (
                U,
                "rustc: cannot borrow `self.nodes` as mutable more than once at a time, inside my loop over children.",
            ),
            (
                A,
                "You hold a &mut to one node while pushing into the same Vec. Iterate over indices instead (collect child indices first) or use the HashMap entry API, so only one mutable borrow is alive.",
            ),
        ],
    ),
    "c24": (
        "media-service",
        27,
        [
            (
                U,
                "Uploads with the presigned URL fail with SignatureDoesNotMatch from the browser but work from the script.",
            ),
            (
                A,
                "The URL is signed with Content-Type application/octet-stream and the browser sends image/png. Sign with the file's actual content type and send the same header from the browser.",
            ),
        ],
    ),
    "c25": (
        "notifications",
        28,
        [
            (U, "Our password reset emails all land in Gmail's spam folder."),
            (
                A,
                "The sending domain has no DKIM signature and the SPF record does not include the mail provider. I added the provider's include: to SPF, published the DKIM key as a TXT record and a DMARC policy of p=none to start.",
            ),
        ],
    ),
    "c26": (
        "billing",
        29,
        [
            (U, "Invoice totals are off by a cent compared to the accountant's spreadsheet."),
            (
                A,
                "We sum floats: 0.1 + 0.2 is not 0.3 in binary. Amounts are now integer cents end to end and rounding uses Decimal with ROUND_HALF_EVEN at the one place we display them.",
            ),
        ],
    ),
    "c27": (
        "platform",
        30,
        [
            (U, "The logging bill tripled this month."),
            (
                A,
                "Every request logs its full body at INFO, 4 TB a month. I moved bodies to DEBUG, sample successful request logs at 1%, keep all errors, and dropped health-check logs.",
            ),
        ],
    ),
    "c28": (
        "catalog-api",
        1,
        [
            (
                U,
                "Whenever the product cache expires, the database CPU spikes to 100% for a minute.",
            ),
            (
                A,
                "Thousands of requests miss the cache at the same moment and all recompute it. I added a short lock so one request recomputes while the others serve the stale value, plus random jitter on the TTL so keys don't expire together.",
            ),
        ],
    ),
    "c29": (
        "mobile-web",
        2,
        [
            (U, "On iPhone the checkout button at the bottom is hidden behind the browser bar."),
            (
                A,
                "height: 100vh on iOS Safari includes the area under the collapsing address bar. Using 100dvh (with a 100vh fallback) keeps the button visible.",
            ),
        ],
    ),
    "c30": (
        "web-frontend",
        4,
        [
            (
                U,
                "The CI workflow reinstalls all dependencies every run even though we added actions/cache.",
            ),
            (
                A,
                "The cache key uses the branch name, so every branch misses, and the path was ~/.npm while npm ci wipes node_modules anyway. Key it on hashFiles('package-lock.json') with a restore-keys prefix.",
            ),
        ],
    ),
    "c31": (
        "realtime-hub",
        5,
        [
            (
                U,
                "Live updates stop after exactly one minute of inactivity, then the client reconnects.",
            ),
            (
                A,
                "The load balancer closes idle connections after 60 seconds. The server now sends a ping frame every 25 seconds and the client answers with pong, so the socket never looks idle.",
            ),
        ],
    ),
    "c32": (
        "deploy-tools",
        6,
        [
            (
                U,
                "After pip install -e . my tests say ModuleNotFoundError: No module named 'deploytools'.",
            ),
            (
                A,
                "The package moved under src/ but setup.cfg still says packages = find: without where = src, so nothing is installed. I set package_dir and where=src; the editable install finds it now.",
            ),
        ],
    ),
    "c33": (
        "api-gateway",
        7,
        [
            (
                U,
                "One request pinned a CPU at 100% and the server stopped answering until we restarted it.",
            ),
            (
                A,
                "The email validation regex has nested quantifiers, (a+)+ style, and a long string of dots makes it backtrack exponentially. I replaced it with a simple split on @ and a length limit, and added a timeout around user-supplied patterns.",
            ),
        ],
    ),
    "c34": (
        "dashboard",
        8,
        [
            (
                U,
                "Can we get rid of the old checkout toggles? They've been on for everyone since spring.",
            ),
            (
                A,
                "I removed the new_checkout and fast_cart flags: deleted the branches for the off state, the flag definitions and their tests. 1,200 lines gone; behaviour unchanged because both were 100% on.",
            ),
        ],
    ),
    "c35": (
        "orders-service",
        9,
        [
            (
                U,
                "Under load the API starts failing with 'QueuePool limit of size 5 overflow 10 reached, connection timed out'.",
            ),
            (
                A,
                "The export endpoint opens a session and returns early on errors without closing it, so connections leak until the pool is empty. I wrapped sessions in a context manager so they always go back to the pool.",
            ),
        ],
    ),
    "c36": (
        "media-service",
        10,
        [
            (U, "Photos taken with phones appear sideways after upload."),
            (
                A,
                "Phones store the picture unrotated with an EXIF orientation tag, and our thumbnailer ignores it. ImageOps.exif_transpose before resizing applies the rotation, then we strip the tag.",
            ),
        ],
    ),
    "c37": (
        "mobile-web",
        11,
        [
            (U, "Polish users see '5 plik' instead of '5 plików' in the file counter."),
            (
                A,
                "Our pluralize only knows one/other, like English. Polish has one, few and many forms. I switched to Intl.PluralRules and ICU message strings with all categories per locale.",
            ),
        ],
    ),
    "c38": (
        "imaging-ext",
        12,
        [
            (
                U,
                "Python dies with 'Segmentation fault (core dumped)' in the resize step, no traceback.",
            ),
            (
                A,
                "With faulthandler enabled the crash is inside our C extension: resize_buffer dereferences the output pointer when malloc failed for a huge image. I check the allocation and raise MemoryError instead.",
            ),
        ],
    ),
    "c39": (
        "reporting",
        13,
        [
            (U, "The daily signups chart shows yesterday's spike at 2am instead of the evening."),
            (
                A,
                "The database stores UTC and the chart groups by date_trunc on the raw timestamp, while the team reads it in America/New_York. I convert to the viewer's zone before truncating to days.",
            ),
        ],
    ),
    "c40": (
        "catalog-api",
        14,
        [
            (
                U,
                "A partner's integration broke because we renamed price to unit_price in the response.",
            ),
            (
                A,
                "That is a breaking change in v1. I restored price alongside unit_price, added a Deprecation and Sunset header, and put the rename in v2 only.",
            ),
        ],
    ),
    "c41": (
        "auth-service",
        15,
        [
            (
                U,
                "Security review says our password hashes are unsalted SHA-1. How do we fix this without resetting everyone?",
            ),
            (
                A,
                "Rehash on login: when a user signs in and the stored hash is SHA-1, verify it, then store an argon2id hash of the password they just typed. A column says which scheme each row uses; after 90 days force a reset for the rest.",
            ),
        ],
    ),
    "c42": (
        "search-infra",
        16,
        [
            (
                U,
                "The nightly reindex stopped with 'No space left on device' and now the disk is full.",
            ),
            (
                A,
                "Each failed rebuild left its half-written temporary segment folder behind, 30 GB each. I delete stale temp folders at start, write the new index next to the old one only when free space is twice its size, and clean up on failure.",
            ),
        ],
    ),
    "c43": (
        "mobile-web",
        17,
        [
            (U, "Scrolling down the feed shows the same posts twice."),
            (
                A,
                "The IntersectionObserver fires several times while a page is still loading, so we request the same page twice. I track the in-flight request and ignore triggers until it returns, and dedupe by post id.",
            ),
        ],
    ),
    "c44": (
        "monorepo",
        18,
        [
            (
                U,
                "jest: Cannot find module '@app/utils' from 'src/orders/total.ts', but tsc compiles fine.",
            ),
            (
                A,
                "tsc reads the paths aliases in tsconfig.json, jest does not. I added a moduleNameMapper entry mapping ^@app/(.*)$ to <rootDir>/packages/$1/src.",
            ),
        ],
    ),
    # -- distractors: the same nouns, other problems ----------------------------------------
    "d01": (
        "api-gateway",
        2,
        [
            (U, "Write a small client for the payments provider's refund endpoint."),
            (
                A,
                "Added PaymentsClient.refund(charge_id, amount) with a typed response, a request id header, and tests with recorded responses.",
            ),
        ],
    ),
    "d02": (
        "orders-service",
        4,
        [
            (U, "Add a nullable notes column to the orders table and expose it in the API."),
            (
                A,
                "Migration 0042 adds orders.notes TEXT NULL; the serializer and the PATCH endpoint accept it.",
            ),
        ],
    ),
    "d03": (
        "scheduler",
        5,
        [
            (U, "Write unit tests for format_duration."),
            (
                A,
                "Added tests for seconds, minutes, hours and days, and for negative input raising ValueError.",
            ),
        ],
    ),
    "d04": (
        "web-frontend",
        6,
        [
            (U, "Add a Dockerfile for local development with hot reload."),
            (
                A,
                "Dockerfile.dev runs npm run dev with the source mounted as a volume and port 5173 exposed; docker compose up starts it.",
            ),
        ],
    ),
    "d05": (
        "realtime-hub",
        7,
        [
            (U, "Design the event names the hub emits to browser clients."),
            (
                A,
                "Proposed order.created, order.updated and presence.changed, each with a version field and the tenant id.",
            ),
        ],
    ),
    "d06": (
        "admin-panel",
        8,
        [
            (U, "Put the admin UI behind nginx on /admin."),
            (
                A,
                "location /admin/ proxies to the admin container on port 3000, with try_files for client-side routes.",
            ),
        ],
    ),
    "d07": (
        "web-frontend",
        9,
        [
            (U, "What branch naming convention should we adopt?"),
            (
                A,
                "type/short-description, e.g. feat/search-filters and fix/login-redirect, with the ticket id as a suffix when there is one.",
            ),
        ],
    ),
    "d08": (
        "crawler",
        10,
        [
            (U, "Run the three sitemap downloads concurrently instead of one after another."),
            (
                A,
                "asyncio.gather over the three coroutines with return_exceptions=True; the total time drops from 9 to 3 seconds.",
            ),
        ],
    ),
    "d09": (
        "dashboard",
        11,
        [
            (U, "Add validation to the settings form: email required, port between 1 and 65535."),
            (A, "Used react-hook-form with a zod schema; errors show under each field."),
        ],
    ),
    "d10": (
        "deploy-tools",
        12,
        [
            (U, "Generate a certificate so the local dev server runs on https."),
            (
                A,
                "mkcert localhost creates a locally trusted certificate; vite's server.https points at the two files.",
            ),
        ],
    ),
    "d11": (
        "orders-service",
        13,
        [
            (U, "Write the Kubernetes deployment for the new invoice worker."),
            (
                A,
                "deployment.yaml with 2 replicas, resource requests of 100m CPU and 128Mi, a liveness probe on /healthz, and the config from a ConfigMap.",
            ),
        ],
    ),
    "d12": (
        "reporting",
        14,
        [
            (U, "SQL for monthly revenue per customer for the finance report."),
            (
                A,
                "SELECT customer_id, date_trunc('month', paid_at) AS month, sum(amount_cents) FROM invoices GROUP BY 1, 2 ORDER BY 2, 3 DESC.",
            ),
        ],
    ),
    "d13": (
        "file-sync",
        15,
        [
            (U, "Script to rename all the exported files to lower case with dashes."),
            (
                A,
                "A Python script walks the folder and renames each file with name.lower().replace(' ', '-'), printing what it would do unless --apply is given.",
            ),
        ],
    ),
    "d14": (
        "auth-service",
        16,
        [
            (U, "Make the login page look like the new design."),
            (
                A,
                "Centered card, logo on top, email and password fields, and a 'forgot password' link under the button.",
            ),
        ],
    ),
    "d15": (
        "billing",
        17,
        [
            (U, "Set up a nightly backup of the billing database."),
            (
                A,
                "A cron entry at 03:00 runs pg_dump to a dated file and uploads it to the backups bucket; we keep 30 days.",
            ),
        ],
    ),
    "d16": (
        "importer",
        18,
        [
            (U, "Add an 'export to CSV' button to the suppliers list."),
            (
                A,
                "The endpoint streams rows with csv.writer and a Content-Disposition header; the button calls it with the current filters.",
            ),
        ],
    ),
    "d17": (
        "proxy",
        19,
        [
            (U, "Add a /metrics route to the Go proxy."),
            (
                A,
                "Registered promhttp.Handler() on /metrics and counters for requests by upstream and status code.",
            ),
        ],
    ),
    "d18": (
        "infra",
        20,
        [
            (U, "Write a terraform module for the staging VPC."),
            (
                A,
                "modules/vpc with public and private subnets in two zones, a NAT gateway, and outputs for the subnet ids.",
            ),
        ],
    ),
    "d19": (
        "web-frontend",
        21,
        [
            (U, "Let us import SVG files as React components."),
            (
                A,
                "Added @svgr/webpack to the webpack config for *.svg, so `import Logo from './logo.svg'` gives a component.",
            ),
        ],
    ),
    "d20": (
        "catalog-api",
        22,
        [
            (U, "How should the new search endpoint paginate?"),
            (
                A,
                "Use opaque cursors rather than page numbers, a default limit of 50 and a maximum of 200, and return next_cursor.",
            ),
        ],
    ),
    "d21": (
        "config-store",
        23,
        [
            (U, "Load settings from settings.json with environment variables overriding them."),
            (
                A,
                "load_settings reads the JSON file, then applies APP_* variables on top, with types taken from the dataclass.",
            ),
        ],
    ),
    "d22": (
        "dashboard",
        24,
        [
            (U, "Lay out the dashboard cards in a responsive grid."),
            (A, "grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)) with a 16px gap."),
        ],
    ),
    "d23": (
        "cli-rs",
        25,
        [
            (U, "Parse command line arguments in the rust CLI with subcommands."),
            (
                A,
                "clap derive with a Commands enum for init, build and serve, each with its own flags.",
            ),
        ],
    ),
    "d24": (
        "media-service",
        26,
        [
            (U, "Delete uploaded originals from the bucket after 90 days."),
            (
                A,
                "An S3 lifecycle rule on the originals/ prefix expires objects after 90 days; thumbnails are kept.",
            ),
        ],
    ),
    "d25": (
        "notifications",
        27,
        [
            (U, "Make the welcome email template match our brand."),
            (
                A,
                "An MJML template with the logo, brand colours and a single call-to-action button, compiled to HTML at build time.",
            ),
        ],
    ),
    "d26": (
        "billing",
        28,
        [
            (U, "Show prices with the right currency symbol for each country."),
            (
                A,
                "Intl.NumberFormat(locale, {style: 'currency', currency}) formats the amount; the locale comes from the account.",
            ),
        ],
    ),
    "d27": (
        "platform",
        29,
        [
            (U, "Switch our logs to JSON so the log search can filter by field."),
            (
                A,
                "structlog with the JSON renderer, a request_id bound per request, and timestamps in ISO format.",
            ),
        ],
    ),
    "d28": (
        "catalog-api",
        30,
        [
            (U, "Notify the storefront when a product changes."),
            (
                A,
                "Publish product.changed on a Redis channel after commit; the storefront subscribes and invalidates that product.",
            ),
        ],
    ),
    "d29": (
        "mobile-web",
        1,
        [
            (U, "The navigation bar should collapse into a menu button on phones."),
            (
                A,
                "Below 640px the links move into a drawer opened by a hamburger button; focus is trapped while it is open.",
            ),
        ],
    ),
    "d30": (
        "web-frontend",
        2,
        [
            (U, "Deploy the site from GitHub Actions when main changes."),
            (
                A,
                "A workflow on push to main builds, runs the tests and uploads dist/ to the static hosting bucket.",
            ),
        ],
    ),
    "d31": (
        "auth-service",
        3,
        [
            (U, "Add refresh tokens so users stay signed in for two weeks."),
            (
                A,
                "Access tokens live 15 minutes; a rotating refresh token in an httpOnly cookie lasts 14 days and is revoked on logout.",
            ),
        ],
    ),
    "d32": (
        "search-infra",
        4,
        [
            (U, "How big will the search index be for next year's data?"),
            (
                A,
                "At the current 2 GB per month of documents and an index about 40% of that, expect around 10 GB by December.",
            ),
        ],
    ),
    "d33": (
        "monorepo",
        5,
        [
            (U, "Set up a shared eslint config for all packages."),
            (A, "packages/eslint-config exports the rules; each package's .eslintrc extends it."),
        ],
    ),
    "d34": (
        "imaging-ext",
        6,
        [
            (U, "Add a sharpen filter to the C extension."),
            (
                A,
                "A 3x3 unsharp kernel in sharpen.c with a Python wrapper and tests comparing against a reference image.",
            ),
        ],
    ),
}

#: (query, conversation it should find)
QUERIES: list[tuple[str, str]] = [
    ("where did we deal with the upstream service throttling us", "c01"),
    ("nightly job hammered the vendor and got rate limited", "c01"),
    ("schema change that froze checkout during a release", "c02"),
    ("test that only breaks around daylight saving", "c03"),
    ("shrinking a huge docker image", "c04"),
    ("server memory kept growing because handlers were registered on every reconnect", "c05"),
    ("browser blocked a request that worked from the terminal", "c06"),
    ("merge conflicts in the npm lock file", "c07"),
    ("scraper hangs forever without any error", "c08"),
    ("react component stuck re-rendering and spamming the backend", "c09"),
    ("tls errors on the company network", "c10"),
    ("container killed for using too much RAM", "c11"),
    ("slow database query fixed with an index", "c12"),
    ("accented file names duplicated between mac and linux", "c13"),
    ("login tokens rejected because a server's time was wrong", "c14"),
    ("scheduled task ran twice after adding a second instance", "c15"),
    ("first column of an uploaded spreadsheet not recognised", "c16"),
    ("goroutines piling up in the go service", "c17"),
    ("infrastructure tool refusing to run because of a stale lock", "c18"),
    ("frontend build crashes running out of memory", "c19"),
    ("export missing a handful of records at page boundaries", "c20"),
    ("config file wiped when the process crashed mid write", "c21"),
    ("white flash before the dark theme applies", "c22"),
    ("fighting the borrow checker in rust", "c23"),
    ("direct browser uploads to object storage rejected", "c24"),
    ("our emails going to junk", "c25"),
    ("amounts off by a penny", "c26"),
    ("observability costs exploded", "c27"),
    ("database overloaded every time the cache expires", "c28"),
    ("button hidden under the safari toolbar on iphone", "c29"),
    ("ci cache never hits so installs are slow", "c30"),
    ("websocket dropped after a minute idle", "c31"),
    ("package not importable after editable install", "c32"),
    ("a validation pattern made the server hang", "c33"),
    ("removing old feature toggles", "c34"),
    ("ran out of database connections under load", "c35"),
    ("pictures from phones show up rotated", "c36"),
    ("plural forms wrong in slavic languages", "c37"),
    ("native module crashing the interpreter with no traceback", "c38"),
    ("chart shows events at the wrong hour because of time zones", "c39"),
    ("we broke a partner by renaming a field in the response", "c40"),
    ("upgrading weak password storage without forcing resets", "c41"),
    ("reindexing filled up the disk", "c42"),
    ("infinite feed shows duplicate items", "c43"),
    ("test runner can't resolve typescript path aliases", "c44"),
    ("backoff when the api says too many requests", "c01"),
    ("keeping the socket alive through the load balancer", "c31"),
    ("money rounding errors in invoices", "c26"),
]

#: exact phrases from conversations: hybrid search must rank their conversation first
PHRASES: list[tuple[str, str]] = [
    ('"token bucket of 10 calls per second"', "c01"),
    ('"lock_timeout"', "c02"),
    ('"freezegun"', "c03"),
    ('"MaxListenersExceededWarning"', "c05"),
    ('"X-Tenant-Id"', "c06"),
    ('"OOMKilled"', "c11"),
    ('"utf-8-sig"', "c16"),
    ('"force-unlock"', "c18"),
    ('"max-old-space-size"', "c19"),
    ('"os.replace"', "c21"),
    ('"SignatureDoesNotMatch"', "c24"),
    ('"ROUND_HALF_EVEN"', "c26"),
    ('"100dvh"', "c29"),
    ('"QueuePool limit"', "c35"),
    ('"exif_transpose"', "c36"),
    ('"Intl.PluralRules"', "c37"),
    ('"faulthandler"', "c38"),
    ('"moduleNameMapper"', "c44"),
    ("sunset header", "c40"),
    ("argon2id", "c41"),
]

#: each conversation's title as a coding agent titles it (Claude Code's ``ai-title``: a
#: few words naming the task, in the conversation's own terms, written from its first
#: prompt and answer, not from the queries); ``bench/semantic_eval.py --titles``
#: writes them and measures recall with them embedded and without
TITLES: dict[str, str] = {
    "c01": "Fix billing sync 429 errors from payments provider",
    "c02": "Orders migration adding fulfilled_at hangs deploy",
    "c03": "Flaky test_next_run_time in CI",
    "c04": "Shrink 2.3 GB container image",
    "c05": "MaxListenersExceededWarning and RSS growth in hub",
    "c06": "Admin UI user save fails in browser, works with curl",
    "c07": "Rebase conflicts in package-lock.json",
    "c08": "Crawler freezes after a few pages",
    "c09": "Settings page makes hundreds of API calls",
    "c10": "pip CERTIFICATE_VERIFY_FAILED on office network",
    "c11": "Worker pod in CrashLoopBackOff",
    "c12": "Speed up slow invoices list endpoint",
    "c13": "Duplicate café.txt files uploaded from Macs",
    "c14": "401 right after login on one server",
    "c15": "Monthly invoice email sent twice",
    "c16": "Spreadsheet import says sku column missing",
    "c17": "Goroutine count growing in proxy",
    "c18": "Terraform state lock error",
    "c19": "npm build heap out of memory after charts library",
    "c20": "API product export returns 9,980 of 10,000 items",
    "c21": "Empty settings.json after kill during save",
    "c22": "Dark mode white flash on page load",
    "c23": "Rust cannot borrow self.nodes as mutable twice",
    "c24": "Presigned URL upload SignatureDoesNotMatch",
    "c25": "Password reset emails landing in Gmail spam",
    "c26": "Invoice totals off by a cent",
    "c27": "Logging bill tripled this month",
    "c28": "DB CPU spikes when product cache expires",
    "c29": "iPhone checkout button behind browser bar",
    "c30": "CI reinstalls dependencies despite actions/cache",
    "c31": "Live updates stop after a minute of inactivity",
    "c32": "ModuleNotFoundError after pip install -e",
    "c33": "Request pins CPU at 100% and server hangs",
    "c34": "Remove old checkout feature flags",
    "c35": "QueuePool limit reached under load",
    "c36": "Phone photos appear sideways after upload",
    "c37": "Polish plural forms in file counter",
    "c38": "Segfault in resize step of C extension",
    "c39": "Signups chart spike shown at 2am",
    "c40": "Partner integration broken by price rename",
    "c41": "Migrate unsalted SHA-1 password hashes",
    "c42": "Nightly reindex fails with no space left on device",
    "c43": "Feed shows the same posts twice when scrolling",
    "c44": "jest cannot find module @app/utils",
    "d01": "Payments provider refund client",
    "d02": "Add notes column to orders",
    "d03": "Unit tests for format_duration",
    "d04": "Dockerfile for local dev with hot reload",
    "d05": "Design hub event names",
    "d06": "Serve admin UI behind nginx on /admin",
    "d07": "Branch naming convention",
    "d08": "Download sitemaps concurrently",
    "d09": "Settings form validation",
    "d10": "HTTPS certificate for local dev server",
    "d11": "Kubernetes deployment for invoice worker",
    "d12": "Monthly revenue per customer SQL",
    "d13": "Rename exported files to lower case with dashes",
    "d14": "Login page redesign",
    "d15": "Nightly billing database backup",
    "d16": "Export suppliers list to CSV",
    "d17": "Add /metrics route to Go proxy",
    "d18": "Terraform module for staging VPC",
    "d19": "Import SVG files as React components",
    "d20": "Pagination for the new search endpoint",
    "d21": "Settings from settings.json with env overrides",
    "d22": "Responsive grid for dashboard cards",
    "d23": "Rust CLI argument parsing with subcommands",
    "d24": "Expire uploaded originals after 90 days",
    "d25": "Branded welcome email template",
    "d26": "Currency symbol per country",
    "d27": "JSON logs for field search",
    "d28": "Notify storefront on product changes",
    "d29": "Collapsible navigation on phones",
    "d30": "Deploy site from GitHub Actions on main",
    "d31": "Refresh tokens for two-week sign-in",
    "d32": "Search index size estimate for next year",
    "d33": "Shared eslint config for packages",
    "d34": "Sharpen filter for the C extension",
}
