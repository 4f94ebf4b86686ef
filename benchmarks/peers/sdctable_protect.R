# Protect one table with R sdcTable and write every cell's status: the peer run of
# benchmarks/suppression_peer.py (issue 21). Never needed by sdckit itself.
#
#   Rscript sdctable_protect.R WORKDIR METHOD MAXN [TIME_LIMIT_MINUTES]
#
# WORKDIR holds cells.csv (the leaf cells: one column per dimension and `freq`) and
# one hierarchy file per dimension, hier_<dim>.csv (sdcTable's "@;code" layout, top
# down). The primary rule is sdcTable's frequency rule (a cell with 1 to MAXN
# contributors is primary); each primary cell then gets the protection levels of
# sdckit's `freq>=MAXN+1` rule (upper MAXN + 1 - freq, lower freq), so that both tools
# protect the same cells to the same requirement. Writes status_<METHOD>.csv (every
# cell: dimensions, freq, sdcStatus), attack_<METHOD>.csv (sdcTable's attack() on its own
# pattern: each primary cell's interval, low and up) and timing_<METHOD>.csv (seconds of
# wall clock and CPU of makeProblem + primarySuppression, and of protectTable alone).
suppressPackageStartupMessages(library(sdcTable))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) {
  stop("usage: Rscript sdctable_protect.R WORKDIR METHOD MAXN [TIME_LIMIT_MINUTES]")
}
workdir <- args[[1]]
method <- args[[2]]
max_n <- as.integer(args[[3]])
time_limit <- if (length(args) >= 4) as.numeric(args[[4]]) else NA

cells <- utils::read.csv(file.path(workdir, "cells.csv"), colClasses = "character")
cells$freq <- as.numeric(cells$freq)
dims <- setdiff(names(cells), "freq")
dim_list <- lapply(dims, function(d) {
  utils::read.csv(
    file.path(workdir, paste0("hier_", d, ".csv")),
    sep = ";", header = FALSE, col.names = c("levels", "codes"), colClasses = "character"
  )
})
names(dim_list) <- dims

clock <- function() {
  t <- proc.time()
  c(elapsed = unname(t[["elapsed"]]), cpu = unname(t[["user.self"]] + t[["sys.self"]]))
}

start <- clock()
problem <- makeProblem(data = cells, dimList = dim_list, freqVarInd = "freq")
problem <- primarySuppression(problem, type = "freq", maxN = max_n)
status <- getInfo(problem, type = "sdcStatus")
freq <- getInfo(problem, type = "freq")
primary <- which(status == "u")
if (length(primary) > 0) {
  problem <- setInfo(problem, type = "UPL", index = primary, input = max_n + 1 - freq[primary])
  problem <- setInfo(problem, type = "LPL", index = primary, input = freq[primary])
}
prepared <- clock()
cat(sprintf("prepared: %d cells, %d primary, in %.1f s\n", length(status), length(primary),
            prepared[["elapsed"]] - start[["elapsed"]]))
flush(stdout())

options <- list(object = problem, method = method)
if (method %in% c("OPT", "HITAS") && !is.na(time_limit)) {
  options$timeLimit <- time_limit
}
result <- do.call(protectTable, options)
done <- clock()

final <- as.data.frame(getInfo(result, type = "finalData"))
keep <- c(dims, "Freq", "sdcStatus")
utils::write.csv(final[, keep], file.path(workdir, paste0("status_", method, ".csv")), row.names = FALSE)
timing <- data.frame(
  phase = c("prepare", "protect"),
  elapsed = c(prepared[["elapsed"]] - start[["elapsed"]], done[["elapsed"]] - prepared[["elapsed"]]),
  cpu = c(prepared[["cpu"]] - start[["cpu"]], done[["cpu"]] - prepared[["cpu"]])
)
utils::write.csv(timing, file.path(workdir, paste0("timing_", method, ".csv")), row.names = FALSE)

# sdcTable's own attacker LPs on its pattern (not timed): each primary cell's interval
attacked <- attack(result)
cells_of <- as.data.frame(sdcProb2df(result, addDups = FALSE, dimCodes = "original"))
attacked <- cbind(cells_of[attacked$id, dims, drop = FALSE], attacked[, c("freq", "low", "up")])
utils::write.csv(attacked, file.path(workdir, paste0("attack_", method, ".csv")), row.names = FALSE)
