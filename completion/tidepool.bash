# bash completion for tidepool(1): commands, options, scene files, solver and mode names.
# Installed by `make install` as PREFIX/share/bash-completion/completions/tidepool.
#
# Commands and options are read from `tidepool --help` and `tidepool COMMAND --help`, so
# a new command or option completes without editing this file.

_tidepool_words() # the command's option column: -x and --long names
{
	"$1" "$2" --help 2>/dev/null |
		grep -oE '^ {2,}(-[A-Za-z0-9],? +)?(--[a-z][a-z0-9-]*)?' |
		grep -oE -- '--?[A-Za-z0-9][a-z0-9-]*'
}

_tidepool()
{
	local prog=${COMP_WORDS[0]} cur prev line cmd words i
	# The word being completed, whole: bash splits "solver=sp" at '=' (COMP_WORDBREAKS),
	# tidepool's values are easier to complete as one word.
	line=${COMP_LINE:0:COMP_POINT}
	cur=${line##*[[:space:]]}
	prev=
	words=()
	read -r -a words <<<"${line% "$cur"}"
	((${#words[@]})) && prev=${words[${#words[@]} - 1]}
	cmd=${words[1]}
	local modes="color height normal caustics particles displacement foam velocity"
	local replies=()

	if ((${#words[@]} <= 1)); then
		cmd=$("$prog" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
		replies=($(compgen -W "$cmd help -h --help -V --version" -- "$cur"))
	else
		case $prev in
		-o | --output)
			if [[ $cur == *=* ]]; then
				replies=($(compgen -f -- "${cur#*=}"))
				replies=("${replies[@]/#/${cur%%=*}=}")
			else
				replies=($(compgen -W "null $(printf '%s= ' $modes)" -- "$cur") $(compgen -f -- "$cur"))
			fi
			;;
		--preset)
			replies=($(compgen -W "ultrafast superfast veryfast faster fast medium slow slower veryslow placebo" -- "$cur"))
			;;
		--set | --vary)
			case $cur in
			solver=*) replies=($(compgen -W "$("$prog" solvers 2>/dev/null | sed -n 's/^\([a-z_0-9]*\) - .*/\1/p')" -P solver= -- "${cur#solver=}")) ;;
			render.mode=* | outputs.*.mode=*) replies=($(compgen -W "$modes" -P "${cur%%=*}=" -- "${cur#*=}")) ;;
			boundary=*) replies=($(compgen -W "reflect absorb wrap" -P boundary= -- "${cur#*=}")) ;;
			maps.height.scale=*) replies=($(compgen -W "auto" -P maps.height.scale= -- "${cur#*=}")) ;;
			maps.exr.type=*) replies=($(compgen -W "half float" -P maps.exr.type= -- "${cur#*=}")) ;;
			maps.exr.compression=*) replies=($(compgen -W "zip zips piz rle none" -P maps.exr.compression= -- "${cur#*=}")) ;;
			ambient.spectrum=*) replies=($(compgen -W "jonswap tma phillips" -P ambient.spectrum= -- "${cur#*=}")) ;;
			*) replies=($(compgen -W "seed= solver= params. boundary= size= fps= duration= frames= substeps= render.mode= maps.height.scale= maps.exr.type= maps.exr.compression= ambient.choppiness= ambient.spectrum= loop.duration=" -- "$cur")) ;;
			esac
			;;
		--listen)
			replies=($(compgen -W "127.0.0.1 ::1 0.0.0.0 ::" -- "$cur"))
			;;
		--metric)
			replies=($(compgen -W "flip" -- "$cur"))
			;;
		--step)
			replies=($(compgen -W "cache render join" -- "$cur"))
			;;
		--stats | --hash | --json | --junit | --sheet | --html | --bin)
			replies=($(compgen -f -- "$cur"))
			;;
		-O | --out-dir | --diff | --cache)
			replies=($(compgen -d -- "$cur"))
			;;
		--frames | --size | --seed | --threads | --crf | --bitrate | --flipbook | --frame-size | \
			-j | --jobs | --name | --thumb | --max-diff | --max-pixels | --max-ratio | \
			--min-psnr | --min-ssim | --fuzz | --ignore | \
			--max-flip | --ppd | --viewing-conditions | --html-frames | --port | --scale | \
			--flipbook-padding | --range | --chunk | --every)
			;;
		*)
			if [[ $cur == -* ]]; then
				replies=($(compgen -W "$(_tidepool_words "$prog" "$cmd")" -- "$cur"))
			else
				case $cmd in
				solvers) replies=($(compgen -W "$("$prog" solvers 2>/dev/null | sed -n 's/^\([a-z_0-9]*\) - .*/\1/p')" -- "$cur")) ;;
				help) replies=($(compgen -W "$("$prog" --help 2>/dev/null | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')" -- "$cur")) ;;
				info) replies=($(compgen -f -- "$cur")) ;;
				render | validate | batch | preview)
					replies=($(compgen -d -S / -- "$cur") $(compgen -f -X '!*.json' -- "$cur")) ;;
				*) replies=($(compgen -f -- "$cur")) ;;
				esac
			fi
			;;
		esac
	fi
	# Bash replaces only the part after its last word break (= or :): drop what precedes.
	local bw=${COMP_WORDS[COMP_CWORD]} pre=
	[[ $cur != "$bw" && $cur == *"$bw" ]] && pre=${cur%"$bw"}
	COMPREPLY=()
	for i in "${replies[@]}"; do
		COMPREPLY+=("${i#"$pre"}")
	done
	[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *[=/.] ]] && compopt -o nospace 2>/dev/null
	return 0
}
complete -F _tidepool tidepool
