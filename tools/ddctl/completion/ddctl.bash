# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# bash completion for ddctl (installed as share/bash-completion/completions/ddctl).
# The candidates come from ddctl itself (`ddctl __complete WORDS...` walks its
# command-line definition: subcommands, options, and the values of an option
# that takes one of a known set; none: file names), so they never fall out of date.
# A line `:files` says that the next positional argument is a FILE: a word that
# does not start with `-` then completes as a file name; `:dirs`, a DIR: as a
# folder name.
_ddctl() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local candidates
    candidates=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null) || return
    if [[ $'\n'$candidates$'\n' == *$'\n:files\n'* && $cur != -* ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
    fi
    if [[ $'\n'$candidates$'\n' == *$'\n:dirs\n'* && $cur != -* ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
    fi
    candidates=${candidates//:files/}
    candidates=${candidates//:dirs/}
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F _ddctl ddctl
