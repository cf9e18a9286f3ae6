plugin "openai" {
  kind        = "provider"
  version     = "0.1.0"
  sdk         = ">= 0.1.0, < 0.2.0"
  runtime     = "grpc"
  entry       = "sparrow-provider-openai"
  components  = ["openai", "openai-compatible", "ollama", "lmstudio", "vllm", "openrouter", "groq", "deepseek", "together"]
  description = "OpenAI (Chat Completions and Responses APIs) and OpenAI-compatible servers: Ollama, LM Studio, vLLM, OpenRouter, Groq, DeepSeek, Together."
  capabilities {
    network = true
    env     = ["OPENAI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "TOGETHER_API_KEY", "OLLAMA_HOST"]
  }
}
