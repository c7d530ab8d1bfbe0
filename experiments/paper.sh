# The paper's rows and figures (Deng et al. 2018, Tables 1 and 3; src/method.md §6), in one place
# for every script that prints a table. Sourced by lib.sh.

# paper_row VARIANT: the paper's "Model | Objective | E" cells for a --attn variant (markdown, pipes escaped).
paper_row() {
  case $1 in
    none) echo "No Attention (uniform average) | log p(y \| mean x) | –" ;;
    soft) echo "Soft Attention | log p(y \| E[z]) | –" ;;
    marginal) echo "Marginal Likelihood | log E[p] | Enum" ;;
    hard-enum) echo "Hard Attention | E_p[log p] | Enum" ;;
    hard-sample) echo "Hard Attention | E_p[log p] | Sample" ;;
    var-dirichlet) echo "Variational Relaxed Attention | E_q[log p] − KL | Sample" ;;
    var-enum) echo "Variational Attention | E_q[log p] − KL | Enum" ;;
    var-sample) echo "Variational Attention | E_q[log p] − KL | Sample" ;;
    var-gumbel) echo "Variational Attention (Gumbel-softmax) | E_q[log p] − KL | Relaxed" ;;
    var-rws) echo "Variational Attention (RWS) | wake-sleep | Sample (K)" ;;
    *) echo "$1 | | " ;;
  esac
}

# paper_figure TASK VARIANT FIGURE: the paper's number, or "–" where it has none.
#   nmt: ppl, bleu (Table 1), entropy (Table 3, prior entropy), ppl_kmax, bleu_kmax (Table 2, K = 5)
#   vqa: nll, eval (Table 1; eval is the VQA score), entropy (Table 3)
# var-gumbel and var-rws are Table 3's inference alternatives (IWSLT only).
paper_figure() {
  local key="$1/$2/$3"
  case $key in
    nmt/soft/ppl) echo 7.17 ;; nmt/soft/bleu) echo 32.77 ;; nmt/soft/entropy) echo 1.24 ;;
    nmt/marginal/ppl) echo 6.34 ;; nmt/marginal/bleu) echo 33.29 ;; nmt/marginal/entropy) echo 0.82 ;;
    nmt/marginal/ppl_kmax) echo 6.90 ;; nmt/marginal/bleu_kmax) echo 33.31 ;;
    nmt/hard-enum/ppl) echo 7.37 ;; nmt/hard-enum/bleu) echo 31.40 ;; nmt/hard-enum/entropy) echo 0.05 ;;
    nmt/hard-enum/ppl_kmax) echo 7.37 ;; nmt/hard-enum/bleu_kmax) echo 31.37 ;;
    nmt/hard-sample/ppl) echo 7.38 ;; nmt/hard-sample/bleu) echo 31.00 ;; nmt/hard-sample/entropy) echo 0.07 ;;
    nmt/hard-sample/ppl_kmax) echo 7.38 ;; nmt/hard-sample/bleu_kmax) echo 31.04 ;;
    nmt/var-dirichlet/ppl) echo 7.58 ;; nmt/var-dirichlet/bleu) echo 30.05 ;; nmt/var-dirichlet/entropy) echo 2.02 ;;
    nmt/var-enum/ppl) echo 6.08 ;; nmt/var-enum/bleu) echo 33.68 ;; nmt/var-enum/entropy) echo 0.54 ;;
    nmt/var-enum/ppl_kmax) echo 6.42 ;; nmt/var-enum/bleu_kmax) echo 33.69 ;;
    nmt/var-sample/ppl) echo 6.17 ;; nmt/var-sample/bleu) echo 33.30 ;; nmt/var-sample/entropy) echo 0.52 ;;
    nmt/var-sample/ppl_kmax) echo 6.51 ;; nmt/var-sample/bleu_kmax) echo 33.27 ;;
    nmt/var-rws/ppl) echo 6.41 ;; nmt/var-rws/bleu) echo 32.96 ;;
    nmt/var-gumbel/ppl) echo 6.51 ;; nmt/var-gumbel/bleu) echo 33.08 ;;
    vqa/soft/nll) echo 1.76 ;; vqa/soft/eval) echo 58.93 ;; vqa/soft/entropy) echo 2.70 ;;
    vqa/marginal/nll) echo 1.69 ;; vqa/marginal/eval) echo 60.33 ;; vqa/marginal/entropy) echo 2.66 ;;
    vqa/hard-enum/nll) echo 1.78 ;; vqa/hard-enum/eval) echo 57.60 ;; vqa/hard-enum/entropy) echo 0.73 ;;
    vqa/hard-sample/nll) echo 1.82 ;; vqa/hard-sample/eval) echo 56.30 ;; vqa/hard-sample/entropy) echo 0.58 ;;
    vqa/var-enum/nll) echo 1.69 ;; vqa/var-enum/eval) echo 58.44 ;; vqa/var-enum/entropy) echo 2.07 ;;
    vqa/var-sample/nll) echo 1.75 ;; vqa/var-sample/eval) echo 57.52 ;; vqa/var-sample/entropy) echo 2.44 ;;
    *) echo "–" ;;
  esac
}
