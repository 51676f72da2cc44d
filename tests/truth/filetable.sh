# Sourced by the truth suite's capture scripts: truth_file_table DIR prints
# the Markdown table of DIR's captured files (bytes, and unzipped bytes for
# the .gz ones) that their README ends with.
truth_file_table() {
	local f b
	echo "| file | bytes | unzipped |"
	echo "| --- | ---: | ---: |"
	for f in "$1"/*.gz "$1"/*.json "$1"/*.jsonl; do
		[ -e "$f" ] || continue
		b=$(basename "$f")
		case $b in
		*.gz) echo "| $b | $(stat -c %s "$f") | $(gzip -dc "$f" | wc -c) |" ;;
		*) echo "| $b | $(stat -c %s "$f") | - |" ;;
		esac
	done
}
