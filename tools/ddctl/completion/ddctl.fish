# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# fish completion for ddctl (installed as share/fish/vendor_completions.d/ddctl.fish,
# or sourced). The candidates come from ddctl itself (`ddctl __complete WORDS...`
# walks its command-line definition): subcommands, options, and the values of an
# option that takes one of a known set; none: file names.
# A line `:files` says that the next positional argument is a FILE: a token
# that does not start with `-` then completes as a file name; `:dirs`, a DIR:
# as a folder name.
function __ddctl_candidates
    set -l words (commandline -opc)
    $words[1] __complete $words[2..-1] 2>/dev/null
end
function __ddctl_files_here
    contains -- :files (__ddctl_candidates); and not string match -q -- '-*' (commandline -ct)
end
function __ddctl_dirs_here
    contains -- :dirs (__ddctl_candidates); and not string match -q -- '-*' (commandline -ct)
end
function __ddctl_words
    __ddctl_candidates | string match -v -- :files | string match -v -- :dirs
end
complete -c ddctl -f -n 'not __ddctl_files_here; and not __ddctl_dirs_here; and test -n "$(__ddctl_words)"' -a '(__ddctl_words)'
complete -c ddctl -f -n '__ddctl_dirs_here' -a '(__fish_complete_directories (commandline -ct) "")'
complete -c ddctl -F -n 'not __ddctl_dirs_here; and begin; __ddctl_files_here; or test -z "$(__ddctl_words)"; end'
