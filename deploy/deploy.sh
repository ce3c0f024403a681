#!/usr/bin/env bash
# Deploys tally to Google Cloud: Increment (HTTP) and Rollup (Firestore
# trigger through Eventarc) as 2nd gen Go functions, on service accounts with
# the least privilege that works, with tally's Firestore security rules and,
# on request, an hourly job that reconciles every counter.
#
# Safe to run again: what exists is left as it is, and the functions are
# redeployed with the same settings. --dry-run prints every command instead;
# --delete removes what it made (deploy/delete.sh). Prerequisites, Firebase
# Auth, App Check and what to check after: docs/deploy.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: deploy/deploy.sh --project ID --region REGION --database-location LOCATION [flags]

  --project ID              Google Cloud project
  --region REGION           region of the functions, e.g. us-central1
  --database ID             Firestore database (default "(default)")
  --database-location LOC   the database's location, e.g. nam5 or us-central1;
                            the Rollup trigger must be in it
  --public                  anyone may call Increment (browser counters): it then takes
                            JSON bodies only, steps of 1, and existing counters only;
                            default: only callers with roles/run.invoker
  --auth firebase           Increment verifies each caller's Firebase ID token (401
                            without one) and takes votes, one per user; default none
  --counter-pattern REGEX   ids of counters a public Increment may create
  --public-max-step N       largest |by| a public Increment takes (default 1)
  --votes-only              a public Increment takes votes only (like buttons): each
                            user's like counts once, and nothing else moves the counter
  --public-rate RATE        plain steps one signed-in user may make on one counter, such as
                            10/m (N/s, N/m, N/h, or off); default 10/m with --public --auth firebase
  --public-user-rate RATE   plain steps one signed-in user may make over all counters;
                            default 100/m with --public --auth firebase
  --app-check               Increment takes only requests with a valid Firebase App Check
                            token (X-Firebase-AppCheck): from your app, not a script
  --quiet-in-document       an increment of a quiet document (no write for the window, no
                            window, trend or rank) is written into it: one write, no shard,
                            no event (TALLY_QUIET_IN_DOCUMENT)
  --increment-billing MODE  request (default): Increment's instances are billed while they
                            hold a request, and a fee a request; instance: for their whole
                            life, at a lower rate, no fee a request (cheaper under a steady
                            load of some ten increments a second or more; see docs/cost.md)
  --increment-cpu CPU       vCPU of each Increment instance (default 1); from 0.08 up to 1,
                            such as 0.167, each instance takes one request at a time and is
                            billed by request: cheaper for quiet documents (see docs/cost.md)
  --cors-origins LIST       origins browsers may call Increment from, comma-separated
  --signed-in-reads         only signed-in users may read counters (default: anyone)
  --reconcile-schedule      also deploy Reconcile and an hourly Cloud Scheduler job for it
  --collection NAME         collection of counters (default counters)
  --shard-field NAME        integer field of each shard (default count)
  --counts SPEC             counts on your own documents instead, such as
                            'posts:likes,views;users/*/posts:likes', and aggregates of your
                            documents, 'posts:comments=count(comments)': one Rollup trigger
                            per collection counted or aggregated, and your rules keep
                            tally's part (tally rules)
  --time-zone ZONE          the time zone of the buckets of counts by time (per day, over 7
                            days), an IANA name (default UTC); the boundary job runs in it
  --shards-collection NAME  subcollection of shards under each counted document (default shards)
  --extension-counters SPEC take over the firestore-counter extension's counters, such as
                            'pages:likes,stats.views;users/*/posts:likes': Rollup moves
                            the shards its clients write under those documents into them,
                            and the rules let clients write only those (two Eventarc
                            triggers a declaration; docs/extension.md)
  --rules FILE              merge tally's rules into your rules file, and publish that,
                            rather than into the rules in force (every rule of yours stays
                            either way; --dry-run prints what the merge changes)
  --window DURATION         each counter's total is written at most once per window (default 1s)
  --rollup-max-instances N  most Rollup instances (default 100: about 70,000 events/s;
                            see docs/deploy.md)
  --parts-max-instances N   most Reconcile instances, which run the parts of the boundary
                            job and Reconcile at once (default 16; see docs/windows.md)
  --runtime RUNTIME         Cloud Functions runtime (default go126)
  --no-monitoring           skip the log-based metrics and the fold-lag alert
  --delete                  remove what this script made: the functions, Rollup's
                            triggers, the scheduler jobs, the topic and subscription of
                            the jobs' parts, the metrics and alert, the
                            service accounts and their roles; the data, the database,
                            the rules and the APIs stay. Give the flags of the deploy
                            (--project, --region, --database-location, --counts)
  --dry-run                 print the commands, run nothing

Flags take their value as the next argument or after '=' (--project=p).
EOF
}

project="" region="" database="(default)" location=""
public=false cors="" signed_in_reads=false reconcile=false dry_run=false monitoring=true
auth=none counter_pattern="" public_max_step=1 votes_only=false app_check=false public_rate="" user_rate="" in_document=false increment_billing=request increment_cpu=1
collection="counters" shard_field="count" window="1s" runtime="go126" rollup_max=100 parts_max=16
counts="" shards_collection="shards" delete=false time_zone=UTC extension_counters="" rules_file=""

need() { # need FLAG VALUE: the flag's value must be there
	if [ -z "${2-}" ]; then
		echo "deploy: $1 needs a value" >&2
		exit 2
	fi
}
while [ $# -gt 0 ]; do
	case "$1" in
	--*=*) # --flag=value is --flag value
		flag=${1%%=*} value=${1#*=}
		shift
		set -- "$flag" "$value" "$@"
		case "$flag" in
		--public | --votes-only | --app-check | --quiet-in-document | --signed-in-reads | --reconcile-schedule | --no-monitoring | --delete | --dry-run | --help)
			echo "deploy: $flag takes no value" >&2
			exit 2
			;;
		esac
		continue
		;;
	--project) need "$1" "${2-}"; project=$2; shift 2 ;;
	--region) need "$1" "${2-}"; region=$2; shift 2 ;;
	--database) need "$1" "${2-}"; database=$2; shift 2 ;;
	--database-location) need "$1" "${2-}"; location=$2; shift 2 ;;
	--cors-origins) need "$1" "${2-}"; cors=$2; shift 2 ;;
	--auth) need "$1" "${2-}"; auth=$2; shift 2 ;;
	--counter-pattern) need "$1" "${2-}"; counter_pattern=$2; shift 2 ;;
	--public-max-step) need "$1" "${2-}"; public_max_step=$2; shift 2 ;;
	--public-rate) need "$1" "${2-}"; public_rate=$2; shift 2 ;;
	--public-user-rate) need "$1" "${2-}"; user_rate=$2; shift 2 ;;
	--collection) need "$1" "${2-}"; collection=$2; shift 2 ;;
	--shard-field) need "$1" "${2-}"; shard_field=$2; shift 2 ;;
	--counts) need "$1" "${2-}"; counts=$2; shift 2 ;;
	--time-zone) need "$1" "${2-}"; time_zone=$2; shift 2 ;;
	--shards-collection) need "$1" "${2-}"; shards_collection=$2; shift 2 ;;
	--window) need "$1" "${2-}"; window=$2; shift 2 ;;
	--runtime) need "$1" "${2-}"; runtime=$2; shift 2 ;;
	--rollup-max-instances) need "$1" "${2-}"; rollup_max=$2; shift 2 ;;
	--parts-max-instances) need "$1" "${2-}"; parts_max=$2; shift 2 ;;
	--public) public=true; shift ;;
	--extension-counters) need "$1" "${2-}"; extension_counters=$2; shift 2 ;;
	--rules) need "$1" "${2-}"; rules_file=$2; shift 2 ;;
	--votes-only) votes_only=true; shift ;;
	--app-check) app_check=true; shift ;;
	--quiet-in-document) in_document=true; shift ;;
	--increment-billing) need "$1" "${2-}"; increment_billing=$2; shift 2 ;;
	--increment-cpu) need "$1" "${2-}"; increment_cpu=$2; shift 2 ;;
	--signed-in-reads) signed_in_reads=true; shift ;;
	--reconcile-schedule) reconcile=true; shift ;;
	--no-monitoring) monitoring=false; shift ;;
	--delete) delete=true; shift ;;
	--dry-run) dry_run=true; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "deploy: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
done
if [ -z "$project" ] || [ -z "$region" ] || [ -z "$location" ]; then
	echo "deploy: --project, --region and --database-location are required" >&2
	usage >&2
	exit 2
fi
if ! [[ $rollup_max =~ ^[1-9][0-9]*$ ]]; then
	echo "deploy: --rollup-max-instances $rollup_max is not a whole number of instances" >&2
	exit 2
fi
if ! [[ $parts_max =~ ^[1-9][0-9]*$ ]]; then
	echo "deploy: --parts-max-instances $parts_max is not a whole number of instances" >&2
	exit 2
fi
if [ "$increment_billing" != request ] && [ "$increment_billing" != instance ]; then
	echo "deploy: --increment-billing $increment_billing: want request or instance" >&2
	exit 2
fi
# Cloud Run gives an instance 0.08 to 1 vCPU in steps of 0.001, or a whole
# number; below one it takes one request at a time and is billed by request.
increment_concurrency=80
if [ "$increment_cpu" != 1 ]; then
	if ! [[ $increment_cpu =~ ^0?\.[0-9]{1,3}$ ]] || awk -v c="$increment_cpu" 'BEGIN { exit !(c < 0.08) }'; then
		echo "deploy: --increment-cpu $increment_cpu: want 1, or 0.08 to 0.999 in steps of 0.001" >&2
		exit 2
	fi
	if [ "$increment_billing" = instance ]; then
		echo "deploy: --increment-cpu $increment_cpu with --increment-billing instance: Cloud Run bills an instance of less than one vCPU by request only" >&2
		exit 2
	fi
	increment_concurrency=1
fi
if ! [[ $region =~ ^[a-z]+-[a-z]+[0-9]+$ ]]; then
	echo "deploy: --region $region is not a Cloud Functions region such as us-central1" \
		"(a multi-region such as nam5 goes in --database-location)" >&2
	exit 2
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The tally command, which checks the configuration and names the trigger
# patterns: built once here, or TALLY_BIN, one already built.
tally_bin=${TALLY_BIN:-}
if [ -z "$tally_bin" ]; then
	build_dir=$(mktemp -d)
	trap 'rm -rf "$build_dir"' EXIT
	tally_bin=$build_dir/tally
	echo "# Building tally, which checks the values below (the first time, a minute or two)" >&2
	go build -o "$tally_bin" ./cmd/tally
fi

# The values passed on to the functions are checked by the functions' own
# configuration code, through 'tally config --check', with nothing else of
# this shell's TALLY_* environment in the way: a bad one stops the deploy
# here, naming its variable, rather than in the cloud.
check_config() {
	local clean=()
	for v in $(compgen -e); do
		if [[ $v == TALLY_* ]]; then
			clean+=(-u "$v")
		fi
	done
	tally_env=(env "${clean[@]}" GOOGLE_CLOUD_PROJECT="$project" TALLY_DATABASE="$database"
		TALLY_COLLECTION="$collection" TALLY_SHARD_FIELD="$shard_field" TALLY_ROLLUP_WINDOW="$window"
		TALLY_COUNTS="$counts" TALLY_SHARDS_COLLECTION="$shards_collection" TALLY_TIME_ZONE="$time_zone"
		TALLY_EXTENSION_COUNTERS="$extension_counters")
	if ! "${tally_env[@]}" \
		TALLY_CORS_ORIGINS="$cors" TALLY_AUTH="$auth" TALLY_PUBLIC="$public" \
		TALLY_COUNTER_PATTERN="$counter_pattern" TALLY_PUBLIC_MAX_STEP="$public_max_step" \
		TALLY_PUBLIC_VOTES_ONLY="$votes_only" TALLY_APP_CHECK="$app_check" TALLY_QUIET_IN_DOCUMENT="$in_document" \
		TALLY_PUBLIC_RATE="$public_rate" TALLY_PUBLIC_USER_RATE="$user_rate" \
		FIRESTORE_EMULATOR_HOST= "$tally_bin" config --check; then
		echo "deploy: fix the value above; nothing was deployed" >&2
		exit 2
	fi
	# One Rollup trigger per counted or aggregated collection, as the functions
	# read them: writes of shards and children, then (on documents) creations of
	# counted documents, each a pattern followed by "created".
	mapfile -t patterns < <("${tally_env[@]}" FIRESTORE_EMULATOR_HOST= "$tally_bin" config --triggers)
	# The indexes the declared counts need (tally indexes), a line each.
	mapfile -t indexes < <("${tally_env[@]}" FIRESTORE_EMULATOR_HOST= "$tally_bin" indexes --lines)
	# With counts by time, the schedule of the boundary job: "CRON TIME_ZONE".
	boundaries=$("${tally_env[@]}" FIRESTORE_EMULATOR_HOST= "$tally_bin" config --boundaries)
}
check_config
if [ "$public" = true ] && [ "$auth" != firebase ]; then
	cat >&2 <<EOF
deploy: warning: --public without --auth firebase. Anyone on the internet may then
  call Increment with no sign-in: add 1 (or up to --public-max-step) to any existing
  counter as often as they like, from any page, and create counters matching
  --counter-pattern; no vote is one per user, and only an Idempotency-Key stops a
  retry from counting twice. Use --auth firebase for buttons that people press.
EOF
fi
if [ "$public" = true ] && [ "$votes_only" = false ]; then
	cat >&2 <<EOF
deploy: note: for a like button, add --votes-only: each signed-in user's like then
  counts once, and no plain step (however limited) moves the counter.
EOF
fi

# trigger_name names Rollup's Eventarc trigger of patterns[i]: tally-rollup-i
# for writes (and deletions), tally-rollup-created-i for creations and
# tally-rollup-updated-i for updates (a trigger's event type cannot change,
# so the name says it).
trigger_name() {
	local pattern kind
	read -r pattern kind <<<"${patterns[$1]}"
	case $kind in
	created | updated) echo "tally-rollup-$kind-$1" ;;
	*) echo "tally-rollup-$1" ;;
	esac
}

# quote prints one argument so that a shell reads it back unchanged.
quote() {
	if [[ $1 =~ ^[A-Za-z0-9_./:=@,+%-]+$ ]]; then
		printf '%s' "$1"
	else
		printf "'%s'" "${1//\'/\'\\\'\'}"
	fi
}

# run prints a command and, unless this is a dry run, runs it.
run() {
	local sep=""
	for arg in "$@"; do
		printf '%s' "$sep"
		quote "$arg"
		sep=" "
	done
	printf '\n'
	if [ "$dry_run" = false ]; then
		"$@"
	fi
}

# exists runs a describe command quietly; in a dry run nothing exists yet.
exists() {
	[ "$dry_run" = false ] && "$@" >/dev/null 2>&1
}

runtime_sa="tally-runtime@$project.iam.gserviceaccount.com"
trigger_sa="tally-trigger@$project.iam.gserviceaccount.com"
scheduler_sa="tally-scheduler@$project.iam.gserviceaccount.com"
parts_sa="tally-parts@$project.iam.gserviceaccount.com"
# '~~' separates the variables: a pattern may hold '|' and ','.
env_vars="^~~^TALLY_DATABASE=$database~~TALLY_COLLECTION=$collection~~TALLY_SHARD_FIELD=$shard_field~~TALLY_ROLLUP_WINDOW=$window"
if [ "$shards_collection" != shards ]; then
	env_vars="$env_vars~~TALLY_SHARDS_COLLECTION=$shards_collection"
fi
if [ -n "$counts" ]; then
	env_vars="$env_vars~~TALLY_COUNTS=$counts~~TALLY_TIME_ZONE=$time_zone"
fi
if [ -n "$cors" ]; then
	env_vars="$env_vars~~TALLY_CORS_ORIGINS=$cors"
fi
if [ "$public" = true ]; then
	env_vars="$env_vars~~TALLY_PUBLIC=true~~TALLY_PUBLIC_MAX_STEP=$public_max_step"
fi
if [ "$auth" != none ]; then
	env_vars="$env_vars~~TALLY_AUTH=$auth"
fi
if [ -n "$counter_pattern" ]; then
	env_vars="$env_vars~~TALLY_COUNTER_PATTERN=$counter_pattern"
fi
if [ "$votes_only" = true ]; then
	env_vars="$env_vars~~TALLY_PUBLIC_VOTES_ONLY=true"
fi
if [ "$app_check" = true ]; then
	env_vars="$env_vars~~TALLY_APP_CHECK=true"
fi
if [ "$in_document" = true ]; then
	env_vars="$env_vars~~TALLY_QUIET_IN_DOCUMENT=true"
fi
if [ -n "$public_rate" ]; then
	env_vars="$env_vars~~TALLY_PUBLIC_RATE=$public_rate"
fi
if [ -n "$user_rate" ]; then
	env_vars="$env_vars~~TALLY_PUBLIC_USER_RATE=$user_rate"
fi
if [ -n "$extension_counters" ]; then
	env_vars="$env_vars~~TALLY_EXTENSION_COUNTERS=$extension_counters"
fi

if [ "$delete" = true ]; then
	# shellcheck source=delete.sh
	source deploy/delete.sh
	exit 0
fi

echo "# APIs"
# Every API a later command uses (TestEnablesEveryAPIItUses holds it to
# that): service accounts and their roles are IAM's and Resource Manager's.
apis=(cloudfunctions.googleapis.com run.googleapis.com cloudbuild.googleapis.com
	artifactregistry.googleapis.com eventarc.googleapis.com pubsub.googleapis.com
	firestore.googleapis.com firebaserules.googleapis.com
	iam.googleapis.com cloudresourcemanager.googleapis.com)
if [ "$monitoring" = true ]; then
	apis+=(logging.googleapis.com monitoring.googleapis.com)
fi
if [ "$reconcile" = true ] || [ -n "$boundaries" ]; then
	apis+=(cloudscheduler.googleapis.com) # the hourly Reconcile, the boundary job
fi
run gcloud services enable "${apis[@]}" --project="$project"

echo "# Service accounts"
ensure_sa() { # ensure_sa NAME TITLE
	local email="$1@$project.iam.gserviceaccount.com"
	if exists gcloud iam service-accounts describe "$email" --project="$project"; then
		echo "# $email exists"
	else
		run gcloud iam service-accounts create "$1" --display-name="$2" --project="$project"
	fi
}
ensure_sa tally-runtime "tally functions: Firestore read and write"
ensure_sa tally-trigger "tally Rollup trigger: receives Eventarc events, invokes Rollup"
# Re-adding a binding that exists changes nothing.
run gcloud projects add-iam-policy-binding "$project" --member="serviceAccount:$runtime_sa" \
	--role=roles/datastore.user --condition=None --quiet
run gcloud projects add-iam-policy-binding "$project" --member="serviceAccount:$trigger_sa" \
	--role=roles/eventarc.eventReceiver --condition=None --quiet

echo "# Increment: HTTP"
access=--no-allow-unauthenticated
if [ "$public" = true ]; then
	access=--allow-unauthenticated
fi
run gcloud functions deploy tally-increment --gen2 --project="$project" --region="$region" \
	--runtime="$runtime" --source=. --entry-point=Increment --trigger-http "$access" \
	--service-account="$runtime_sa" --set-env-vars="$env_vars" \
	--memory=256Mi --cpu="$increment_cpu" --concurrency="$increment_concurrency" --timeout=30s
if [ "$increment_billing" = instance ]; then
	echo "# Increment billed by instance: CPU always allocated, no fee a request"
	run gcloud run services update tally-increment --project="$project" --region="$region" \
		--no-cpu-throttling --quiet
fi

echo "# Rollup: every write to a shard. Any number of instances keeps each parent"
echo "# at one write per window; each holds up to 1000 events (see docs/deploy.md)."
run gcloud functions deploy tally-rollup --gen2 --project="$project" --region="$region" \
	--runtime="$runtime" --source=. --entry-point=Rollup \
	--trigger-location="$location" \
	--trigger-event-filters=type=google.cloud.firestore.document.v1.written \
	--trigger-event-filters="database=$database" \
	--trigger-event-filters-path-pattern="document=${patterns[0]}" \
	--trigger-service-account="$trigger_sa" --retry \
	--service-account="$runtime_sa" --set-env-vars="$env_vars" \
	--max-instances="$rollup_max" --concurrency=1000 --cpu=1 --memory=256Mi --timeout=60s
run gcloud functions add-invoker-policy-binding tally-rollup --project="$project" --region="$region" \
	--member="serviceAccount:$trigger_sa"
# A function has one trigger: each further counted collection, and each
# collection of counted documents (for their creation, which gives a new
# document its counts at once, and, where ranked, their deletion, which
# takes a document off its boards), gets an Eventarc trigger of its own on
# the same Rollup service.
for i in "${!patterns[@]}"; do
	[ "$i" -eq 0 ] && continue
	read -r pattern kind <<<"${patterns[$i]}"
	event=google.cloud.firestore.document.v1.${kind:-written}
	trigger=$(trigger_name "$i")
	if exists gcloud eventarc triggers describe "$trigger" --location="$location" --project="$project"; then
		run gcloud eventarc triggers update "$trigger" --location="$location" --project="$project" \
			--event-filters-path-pattern="document=$pattern"
	else
		run gcloud eventarc triggers create "$trigger" --location="$location" --project="$project" \
			--destination-run-service=tally-rollup --destination-run-region="$region" \
			--event-filters=type="$event" \
			--event-filters="database=$database" \
			--event-filters-path-pattern="document=$pattern" \
			--event-data-content-type=application/protobuf \
			--service-account="$trigger_sa"
	fi
done

if [ ${#indexes[@]} -gt 0 ]; then
	echo "# Indexes (tally indexes): a composite index for each count with filters on two"
	echo "# fields or more, and none on tally's bookkeeping of parts, which no query reads"
fi
for line in "${indexes[@]}"; do
	read -r kind group rest <<<"$line"
	case $kind in
	composite)
		config=()
		read -r scope rest <<<"$rest"
		for field in $rest; do
			config+=(--field-config="field-path=$field,order=ascending")
		done
		run gcloud firestore indexes composite create --collection-group="$group" --query-scope="$scope" \
			"${config[@]}" --database="$database" --project="$project" --async ||
			echo "# (that index exists already)"
		;;
	exempt)
		run gcloud firestore indexes fields update "$rest" --collection-group="$group" --disable-indexes \
			--database="$database" --project="$project" --async
		;;
	field)
		# A single-field index of collection group scope: gcloud has no
		# flag for it, Firestore's admin API takes it.
		read -r field rest <<<"$rest"
		field_indexes=""
		for scope in $rest; do
			scope=${scope//-/_}
			field_indexes+="${field_indexes:+,}{\"queryScope\":\"${scope^^}\",\"fields\":[{\"fieldPath\":\"$field\",\"order\":\"ASCENDING\"}]}"
		done
		url="https://firestore.googleapis.com/v1/projects/$project/databases/$database/collectionGroups/$group/fields/$field?updateMask=indexConfig"
		echo "curl -sf -X PATCH -H \"Authorization: Bearer \$(gcloud auth print-access-token)\" $(quote "$url") -d $(quote "{\"indexConfig\":{\"indexes\":[$field_indexes]}}")"
		if [ "$dry_run" = false ]; then
			curl -sf -X PATCH -H "Authorization: Bearer $(gcloud auth print-access-token)" -H 'Content-Type: application/json' \
				"$url" -d "{\"indexConfig\":{\"indexes\":[$field_indexes]}}" >/dev/null
		fi
		;;
	esac
done

echo "# Idempotency keys: Firestore deletes each record once its expires_at has passed"
run gcloud firestore fields ttls update expires_at --collection-group=keys --enable-ttl \
	--database="$database" --project="$project" --async
if [ "$public" = true ] && [ "$auth" = firebase ]; then
	echo "# Public limits: each user's document goes once its limits have reset"
	run gcloud firestore fields ttls update expires_at --collection-group="${collection}_limits" --enable-ttl \
		--database="$database" --project="$project" --async
fi

# The app's rules are its own: tally's part is merged into the rules in
# force (or into --rules FILE), between two marker comments, and every
# rule of the app's stays; a merge that cannot be made stops the deploy.
# settings are the flags of tally's own commands that say this deploy's
# configuration: tally rules here, and tally doctor after it.
settings=(--project="$project" --database="$database" --collection="$collection")
if [ -n "$counts" ]; then
	settings+=(--counts="$counts" --shards-collection="$shards_collection")
fi
if [ "$signed_in_reads" = true ]; then
	settings+=(--signed-in-reads)
fi
if [ -n "$extension_counters" ]; then
	settings+=(--extension-counters="$extension_counters")
fi
rules=(rules "${settings[@]}")
if [ -n "$rules_file" ]; then
	echo "# Security rules: tally's part merged into $rules_file, every rule of yours kept"
	rules+=(--merge="$rules_file")
else
	echo "# Security rules: tally's part merged into the rules in force, every rule of yours kept"
	rules+=(--live)
fi
if [ "$dry_run" = true ]; then
	echo "# what it changes of them (read now; a dry run publishes nothing):"
	if ! "$tally_bin" "${rules[@]}" --diff; then
		echo "deploy: could not read the rules in force to show what the merge changes (above): the deploy reads them as this did, with your application default credentials, and stops if it cannot" >&2
	fi
fi
run go run ./cmd/tally "${rules[@]}" --publish

if [ "$monitoring" = true ]; then
	if [ "$dry_run" = false ] && ! gcloud alpha --help >/dev/null 2>&1; then
		echo "deploy: the fold-lag alert needs gcloud's alpha commands: 'gcloud components install alpha'" \
			"(the Debian package google-cloud-cli has them), or deploy with --no-monitoring" >&2
		exit 2
	fi
	echo "# Monitoring: fold lag (a distribution) and failed folds, from Rollup's log lines;"
	echo "# an alert when the fold lag's 99th percentile stays over 30 s for 5 minutes."
	lag_config="$PWD/deploy/monitoring/fold-lag.yaml"
	if exists gcloud logging metrics describe tally_fold_lag --project="$project"; then
		run gcloud logging metrics update tally_fold_lag --config-from-file="$lag_config" --project="$project"
	else
		run gcloud logging metrics create tally_fold_lag --config-from-file="$lag_config" --project="$project"
	fi
	# log_counter NAME DESCRIPTION FILTER makes, or brings up to date, the
	# log-based metric NAME that counts the log lines FILTER finds.
	log_counter() {
		if exists gcloud logging metrics describe "$1" --project="$project"; then
			run gcloud logging metrics update "$1" --log-filter="$3" --project="$project"
		else
			run gcloud logging metrics create "$1" --project="$project" --description="$2" --log-filter="$3"
		fi
	}
	log_counter tally_fold_failures "tally: folds that failed or could not be made, and events sent back for a retry" \
		'resource.type="cloud_run_revision" AND resource.labels.service_name="tally-rollup" AND severity>=WARNING AND jsonPayload.message=~"^rollup: (fold failed|cannot fold|will retry)"'
	log_counter tally_verify_refused "tally: clients that stopped verifying the counted document in their commits, as Firestore refused it" \
		'resource.type="cloud_run_revision" AND resource.labels.service_name=("tally-increment" OR "tally-rollup") AND severity>=ERROR AND jsonPayload.message=~"^fsrpc: Firestore refused a commit.s verify"'
	alert="tally: fold lag over 30 s"
	if [ "$dry_run" = false ] && [ -n "$(gcloud alpha monitoring policies list --project="$project" \
		--filter="displayName=\"$alert\"" --format='value(name)' 2>/dev/null)" ]; then
		echo "# the alert policy \"$alert\" exists"
	else
		run gcloud alpha monitoring policies create --project="$project" --display-name="$alert" \
			--combiner=OR --condition-display-name="p99 fold lag over 30 s for 5 minutes" \
			--condition-filter='metric.type="logging.googleapis.com/user/tally_fold_lag" AND resource.type="cloud_run_revision"' \
			--aggregation='{"alignmentPeriod": "60s", "perSeriesAligner": "ALIGN_PERCENTILE_99", "crossSeriesReducer": "REDUCE_MAX"}' \
			--if='> 30000' --duration=300s \
			--documentation='A counter total trails its shards by over 30 s: see the rollup: fold log lines and tally_fold_failures.'
	fi
fi

if [ "$reconcile" = true ] || [ -n "$boundaries" ]; then
	echo "# Reconcile, hourly (with --reconcile-schedule), and the boundary job of counts by time:"
	echo "# each lists its documents in parts of at most 1,000 and publishes one message a part to"
	echo "# tally-parts, whose push subscription runs each part in an invocation of its own (docs/windows.md)"
	ensure_sa tally-scheduler "tally jobs: the scheduler, invokes Reconcile"
	ensure_sa tally-parts "tally jobs: pushes their parts from Pub/Sub, invokes Reconcile"
	if exists gcloud pubsub topics describe tally-parts --project="$project"; then
		echo "# the topic tally-parts exists"
	else
		run gcloud pubsub topics create tally-parts --project="$project"
	fi
	# The functions publish to this topic, and to no other.
	run gcloud pubsub topics add-iam-policy-binding tally-parts --project="$project" \
		--member="serviceAccount:$runtime_sa" --role=roles/pubsub.publisher
	run gcloud functions deploy tally-reconcile --gen2 --project="$project" --region="$region" \
		--runtime="$runtime" --source=. --entry-point=Reconcile --trigger-http --no-allow-unauthenticated \
		--service-account="$runtime_sa" --set-env-vars="$env_vars~~TALLY_PARTS_TOPIC=tally-parts" \
		--memory=256Mi --cpu=1 --concurrency=1 --timeout=540s --max-instances="$parts_max"
	run gcloud functions add-invoker-policy-binding tally-reconcile --project="$project" --region="$region" \
		--member="serviceAccount:$scheduler_sa"
	run gcloud functions add-invoker-policy-binding tally-reconcile --project="$project" --region="$region" \
		--member="serviceAccount:$parts_sa"
	url="https://$region-$project.cloudfunctions.net/tally-reconcile"
	# Pub/Sub mints the push's token as tally-parts (a project made before
	# April 2021 needs its service agent granted that, as here). A part not
	# answered within the deadline, or answered with an error, is delivered
	# again, alone, with a backoff; a part kept past a day is dropped, and
	# the job's next run lists its documents again.
	if [ "$dry_run" = true ]; then
		project_number=PROJECT_NUMBER
	else
		project_number=$(gcloud projects describe "$project" --format='value(projectNumber)')
	fi
	run gcloud iam service-accounts add-iam-policy-binding "$parts_sa" --project="$project" \
		--member="serviceAccount:service-$project_number@gcp-sa-pubsub.iam.gserviceaccount.com" \
		--role=roles/iam.serviceAccountTokenCreator
	verb=create topic=(--topic=tally-parts)
	if exists gcloud pubsub subscriptions describe tally-parts-push --project="$project"; then
		verb=update topic=()
	fi
	run gcloud pubsub subscriptions "$verb" tally-parts-push --project="$project" "${topic[@]}" \
		--push-endpoint="$url?part" --push-auth-service-account="$parts_sa" --push-auth-token-audience="$url" \
		--ack-deadline=600 --min-retry-delay=10s --max-retry-delay=600s --message-retention-duration=1d
	if [ "$reconcile" = true ]; then
		verb=create
		if exists gcloud scheduler jobs describe tally-reconcile --location="$region" --project="$project"; then
			verb=update
		fi
		run gcloud scheduler jobs "$verb" http tally-reconcile --project="$project" --location="$region" \
			--schedule="0 * * * *" --uri="$url" --http-method=POST \
			--oidc-service-account-email="$scheduler_sa" --oidc-token-audience="$url"
	fi
	if [ -n "$boundaries" ]; then
		# At each start of a bucket of the smallest unit of the windows, as
		# tally config --boundaries gives it in UTC (a schedule in the windows'
		# zone would skip or repeat a start where its clocks change): the
		# documents folded in the bucket that ended get their windows moved
		# (see docs/windows.md).
		read -r cron_1 cron_2 cron_3 cron_4 cron_5 zone <<<"$boundaries"
		verb=create
		if exists gcloud scheduler jobs describe tally-boundaries --location="$region" --project="$project"; then
			verb=update
		fi
		run gcloud scheduler jobs "$verb" http tally-boundaries --project="$project" --location="$region" \
			--schedule="$cron_1 $cron_2 $cron_3 $cron_4 $cron_5" --time-zone="$zone" --uri="$url?windows" --http-method=POST \
			--attempt-deadline=540s --oidc-service-account-email="$scheduler_sa" --oidc-token-audience="$url"
	fi
fi

# counted_example prints, from --counts, a document path of the first
# collection with a plain count (an id of each collection in capitals,
# POSTS_ID) and that count; nothing if every count is an aggregate.
counted_example() {
	local entry coll fields f part prev="" path="" i=0 entries fs parts
	IFS=';' read -ra entries <<<"$counts"
	for entry in "${entries[@]}"; do
		coll=${entry%%:*} fields=${entry#*:}
		IFS=',' read -ra fs <<<"$fields"
		for f in "${fs[@]}"; do
			f=${f// /}
			case $f in *=* | *'('*) continue ;; esac
			IFS='/' read -ra parts <<<"$coll"
			for part in "${parts[@]}"; do
				if [ $((i % 2)) -eq 0 ]; then
					path+="$part/"
				else
					path+="$(id_of "$prev")/"
				fi
				prev=$part i=$((i + 1))
			done
			echo "$path$(id_of "$prev") $f"
			return
		done
	done
}

# id_of is the placeholder for an id of the collection $1: POSTS_ID.
id_of() { printf '%s_ID' "$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]')"; }

# try_it prints how to try the deployed Increment, as this deploy takes it.
try_it() {
	local url="https://$region-$project.cloudfunctions.net/tally-increment"
	# The header is printed for a shell to expand: single quotes keep it as it is.
	# shellcheck disable=SC2016
	local body='{"counter":"likes"}' bearer='"Authorization: Bearer $(gcloud auth print-identity-token)"'
	local doc field
	if [ -n "$counts" ]; then
		read -r doc field <<<"$(counted_example)"
		if [ -z "$doc" ]; then
			echo "# Every count declared is an aggregate, which your app's own writes of child documents move: write one, and read the parent."
			return
		fi
		body="{\"counter\":\"$doc\",\"field\":\"$field\"}"
	fi
	if [ "$votes_only" = true ]; then
		body="${body%\}},\"vote\":true}"
	fi
	echo "# Increment is at $url (the url of the starter app's src/config.js)."
	if [ -n "$counts" ]; then
		echo "# Counts are fields of your own documents, which Increment never creates: put the path of one of yours in place of $doc."
	fi
	if [ "$public" = true ] && [ "$auth" = firebase ]; then
		echo "# It takes signed-in users only: sign in a user of the project (email and password sign-in on;"
		echo "# WEB_API_KEY is firebaseConfig.apiKey) for an ID token, then send it:"
		cat <<'TRY'
TOKEN=$(curl -s 'https://identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=WEB_API_KEY' -H 'Content-Type: application/json' -d '{"email":"you@example.com","password":"YOUR_PASSWORD","returnSecureToken":true}' | sed -n 's/.*"idToken": *"\([^"]*\)".*/\1/p')
TRY
		# shellcheck disable=SC2016
		bearer='"Authorization: Bearer $TOKEN"'
	elif [ "$public" = true ]; then
		bearer=""
	fi
	if [ "$app_check" = true ]; then
		echo "# App Check is enforced: a request needs -H \"X-Firebase-AppCheck: TOKEN\" from the app (or a debug token); pressing Like in the app is the simplest try."
	fi
	if [ -n "$counter_pattern" ]; then
		echo "# --counter-pattern allows only the counters it names: put one of them in place of likes."
	fi
	echo "curl -s -X POST $url${bearer:+ -H $bearer} -H 'Content-Type: application/json' -d '$body'"
}

# check_it prints the tally doctor command for this deploy's settings.
check_it() {
	echo "# Then check, on the project, what tally relies on there (a line a check; it writes only documents of its own, and removes them):"
	local arg line="go run ./cmd/tally doctor"
	for arg in "${settings[@]}" --region="$region"; do
		line+=" $(quote "$arg")"
	done
	echo "$line"
}

if [ "$dry_run" = false ]; then
	echo "# Done. Try it:"
	try_it
	check_it
elif [ "$delete" = false ]; then
	echo "# Once deployed (the commands above, or this command without --dry-run), try it:"
	try_it
	check_it
fi
