#!/usr/bin/zsh -f
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# zsh_complete.zsh COMPLETION_DIR LINE...: what zsh's own completion system
# (compinit, _files, the _ddctl function found on fpath as installed) offers
# for each LINE followed by a Tab: the matches of each line, one per line,
# sorted, each line's list ended by a line `::done::`. It runs one
# interactive zsh on a pseudo-terminal (zsh/zpty), types each LINE and a Tab
# there (the line cleared before the next), and records every match compadd
# receives (compadd is wrapped: it still adds them). ddctl must be on PATH;
# file names are those of the current directory.
zmodload zsh/zpty zsh/zselect || exit 2
dir=$1
shift
out=$(mktemp) || exit 2
rc=$(mktemp) || exit 2
fdir=$(mktemp -d) || exit 2
cp $dir/ddctl.zsh $fdir/_ddctl || exit 2  # as installed: share/zsh/site-functions/_ddctl
cat >$rc <<EOF
PS1='' PROMPT='' RPROMPT=''
unsetopt zle_bracketed_paste 2>/dev/null
# the completion system's own functions (not every system's: compinit reads them all)
fpath=(${(q)fdir} \${fpath:#*/Completion/*} \${(M)fpath:#*/Completion/(Base|Unix|Zsh)})
autoload -Uz compinit && compinit -u -D
compadd() {
    if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
        builtin compadd "\$@"
        return
    fi
    local -a __hits
    builtin compadd -A __hits "\$@"
    print -rl -- "\${__hits[@]}" >>${(q)out}
    builtin compadd "\$@"
}
# Tab: complete, then mark the end of this line's matches
complete-and-mark() {
    zle complete-word
    print -r -- ::done:: >>${(q)out}
}
zle -N complete-and-mark
zstyle ':completion:*' list-prompt ''
zstyle ':completion:*' menu no
bindkey -e
bindkey '^I' complete-and-mark
EOF
zpty -b z "ZDOTDIR=/nonexistent zsh -f -i"
zpty -w z "source ${(q)rc}"
n=0
typeset -a got marks
for line in "$@"; do
    (( n++ ))
    zpty -w -n z $'\C-u'"${line}"$'\t'  # the line cleared, then typed
    for i in {1..300}; do
        got=(${(f)"$(<$out)"})
        marks=(${(M)got:#::done::})
        (( ${#marks} >= n )) && break
        zpty -r -t z junk 2>/dev/null  # drain the terminal
        zselect -t 10                  # 100 ms
    done
done
zpty -d z
# each line's matches, sorted, once each, then ::done::
cur=()
while IFS= read -r l; do
    if [[ $l == ::done:: ]]; then
        (( $#cur )) && print -rl -- ${(ou)cur}
        print -r -- ::done::
        cur=()
    else
        cur+=("$l")
    fi
done <$out
rm -rf $out $rc $fdir
