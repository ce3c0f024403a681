# shellcheck shell=bash disable=SC2154
# Sourced by deploy.sh --delete, with its flags parsed and its helpers
# (run, exists, trigger_name, the service accounts, the trigger patterns) defined: removes
# what deploy.sh creates, in the reverse order, each only if it exists (a
# dry run prints every command). It leaves the data (counters, shards,
# votes, your documents' counts), the database, the published security
# rules, the TTL policies, the indexes and the enabled APIs, which other things may use.

echo "# Removing tally from $project ($region); the data, the database, the rules and the APIs stay"

jobs=(tally-reconcile)
if [ -n "$boundaries" ] || [ "$dry_run" = false ]; then
	jobs+=(tally-boundaries)
fi
for job in "${jobs[@]}"; do
	if [ "$dry_run" = true ] || exists gcloud scheduler jobs describe "$job" --location="$region" --project="$project"; then
		run gcloud scheduler jobs delete "$job" --location="$region" --project="$project" --quiet
	fi
done

echo "# The jobs' parts: the push subscription, then the topic"
if [ "$dry_run" = true ] || exists gcloud pubsub subscriptions describe tally-parts-push --project="$project"; then
	run gcloud pubsub subscriptions delete tally-parts-push --project="$project" --quiet
fi
if [ "$dry_run" = true ] || exists gcloud pubsub topics describe tally-parts --project="$project"; then
	run gcloud pubsub topics delete tally-parts --project="$project" --quiet
fi

echo "# Monitoring"
alert="tally: fold lag over 30 s"
if [ "$dry_run" = true ]; then
	run gcloud alpha monitoring policies delete POLICY_NAME --project="$project" --quiet
else
	for policy in $(gcloud alpha monitoring policies list --project="$project" \
		--filter="displayName=\"$alert\"" --format='value(name)' 2>/dev/null); do
		run gcloud alpha monitoring policies delete "$policy" --project="$project" --quiet
	done
fi
for metric in tally_fold_lag tally_fold_failures tally_verify_refused; do
	if [ "$dry_run" = true ] || exists gcloud logging metrics describe "$metric" --project="$project"; then
		run gcloud logging metrics delete "$metric" --project="$project" --quiet
	fi
done

echo "# Rollup's further Eventarc triggers, then the functions"
triggers=()
if [ "$dry_run" = true ]; then
	for i in "${!patterns[@]}"; do
		[ "$i" -eq 0 ] || triggers+=("$(trigger_name "$i")")
	done
else
	mapfile -t triggers < <(gcloud eventarc triggers list --location="$location" --project="$project" \
		--filter="name~/triggers/tally-rollup-((created|updated)-)?[0-9]+$" --format='value(name.basename())' 2>/dev/null)
fi
for trigger in "${triggers[@]}"; do
	run gcloud eventarc triggers delete "$trigger" --location="$location" --project="$project" --quiet
done
for fn in tally-reconcile tally-rollup tally-increment; do
	if [ "$dry_run" = true ] || exists gcloud functions describe "$fn" --gen2 --region="$region" --project="$project"; then
		run gcloud functions delete "$fn" --gen2 --region="$region" --project="$project" --quiet
	fi
done

echo "# The service accounts' roles, then the accounts"
# A binding removed already (by an earlier --delete) is no error.
run gcloud projects remove-iam-policy-binding "$project" --member="serviceAccount:$runtime_sa" \
	--role=roles/datastore.user --condition=None --quiet || echo "# $runtime_sa had no roles/datastore.user"
run gcloud projects remove-iam-policy-binding "$project" --member="serviceAccount:$trigger_sa" \
	--role=roles/eventarc.eventReceiver --condition=None --quiet || echo "# $trigger_sa had no roles/eventarc.eventReceiver"
for sa in "$parts_sa" "$scheduler_sa" "$trigger_sa" "$runtime_sa"; do
	if [ "$dry_run" = true ] || exists gcloud iam service-accounts describe "$sa" --project="$project"; then
		run gcloud iam service-accounts delete "$sa" --project="$project" --quiet
	fi
done
echo "# Removed. The counters' documents stay: 'tally delete ID' removes one, with its shards."
