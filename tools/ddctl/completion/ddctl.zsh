#compdef ddctl
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# zsh completion for ddctl (installed as share/zsh/site-functions/_ddctl, or
# sourced). The candidates come from ddctl itself (`ddctl __complete WORDS...`
# walks its command-line definition): subcommands, options, and the values of
# an option that takes one of a known set; none: file names.
# A line `:files` says that the next positional argument is a FILE: a word that
# does not start with `-` then completes as a file name; `:dirs`, a DIR: as a
# folder name.
_ddctl() {
    local -a candidates
    candidates=(${(f)"$(${words[1]} __complete ${(Q)words[2,CURRENT-1]} 2>/dev/null)"})
    if (( ${candidates[(Ie):files]} )); then
        candidates=(${candidates:#:files})
        if [[ $PREFIX != -* ]]; then
            _files
            return
        fi
    fi
    if (( ${candidates[(Ie):dirs]} )); then
        candidates=(${candidates:#:dirs})
        if [[ $PREFIX != -* ]]; then
            _files -/
            return
        fi
    fi
    if (( ${#candidates} )); then
        compadd -a candidates
    else
        _files
    fi
}
if [[ "${funcstack[1]}" == _ddctl ]]; then
    _ddctl "$@"
else
    compdef _ddctl ddctl
fi
