# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# fish completion for ddctl (installed as share/fish/vendor_completions.d/ddctl.fish,
# or sourced). The candidates come from ddctl itself (`ddctl __complete WORDS...`
# walks its command-line definition): subcommands, options, and the values of an
# option that takes one of a known set; none: file names.
function __ddctl_candidates
    set -l words (commandline -opc)
    $words[1] __complete $words[2..-1] 2>/dev/null
end
complete -c ddctl -f -n 'test -n "$(__ddctl_candidates)"' -a '(__ddctl_candidates)'
complete -c ddctl -F -n 'test -z "$(__ddctl_candidates)"'
